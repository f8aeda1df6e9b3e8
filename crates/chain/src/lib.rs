//! preconf-chain: the chain side of preconf-node. Pure Rust, no Node.js types: genesis,
//! the on-disk store with archive reads, EVM execution (revm), the transaction pool and
//! the pre-confirmation builder. The `preconf-napi` crate adapts it to Node.

pub mod builder;
pub mod config;
pub mod error;
pub mod exec;
pub mod fees;
pub mod genesis;
pub mod logs;
pub mod node;
pub mod pool;
pub mod rpc;
pub mod spec;
pub mod state;
pub mod store;
pub mod submit;
pub mod types;
pub mod view;

pub use config::NodeConfig;
pub use error::{ChainError, ChainResult};
pub use node::Node;
pub use types::BlockId;

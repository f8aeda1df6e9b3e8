//! preconf-chain: the chain side of preconf-node. Pure Rust, no Node.js types and no JSON
//! rendering: genesis, the on-disk store with archive reads, EVM execution (revm), the
//! transaction pool and the pre-confirmation builder, and a typed read API. The
//! `preconf-rpc` crate renders its results; `preconf-napi` adapts both to Node.
//!
//! Dependencies point one way: `node` → `builder`, `api` → `chain_state` → `store`,
//! `state`, `pool`, `exec` → `spec`, `types`.

pub mod api;
pub mod builder;
pub mod chain_state;
pub mod config;
pub mod consensus;
pub mod doorbell;
pub mod error;
pub mod events;
pub mod exec;
pub mod genesis;
pub mod import;
pub mod ledger;
pub mod metrics;
pub mod node;
pub mod pool;
pub mod replica;
pub mod spec;
pub mod state;
pub mod store;
pub mod types;
pub mod view;

pub use config::{ChainConfig, Profile};
pub use error::{ChainError, ChainResult, SimulateError};
pub use node::Node;
pub use types::BlockId;

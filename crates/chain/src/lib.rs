//! preconf-chain: the chain side of preconf-node. Pure Rust, no Node.js types and no JSON
//! rendering: genesis, the on-disk store with archive reads, EVM execution (revm), the
//! transaction pool and the pre-confirmation builder, and a typed read API. The
//! `preconf-rpc` crate renders its results; `preconf-napi` adapts both to Node.
//!
//! Dependencies point one way (`npm run check` fails on a cycle: scripts/module-cycles.mjs),
//! each layer using only those before it:
//!
//! 1. `append`, `changes`, `config`, `doorbell`, `error`, `fork`, `metrics`, `spec`
//! 2. `pool`, `store`
//! 3. `genesis`, `state`, `types`
//! 4. `consensus`, `events`, `view`, `wire`
//! 5. `exec`, `ledger`
//! 6. `chain_state`, `import`
//! 7. `api` · 8. `replica` · 9. `builder` · 10. `node`

pub mod api;
pub mod append;
pub mod builder;
pub mod chain_state;
pub mod changes;
mod commit;
pub mod config;
pub mod consensus;
pub mod dev;
pub mod doorbell;
pub mod engine;
pub mod error;
pub mod events;
pub mod exec;
pub mod export;
pub mod flashblocks;
pub mod followed;
pub mod fork;
pub mod genesis;
pub mod import;
pub mod ledger;
pub mod log;
pub mod metrics;
pub mod node;
pub mod pool;
pub mod replica;
pub mod spec;
pub mod state;
pub mod store;
pub mod types;
pub mod view;
mod warm;
pub mod wire;

pub use config::{ChainConfig, Profile};
pub use error::{
    Cause, ChainError, ChainResult, ConfigError, InternalError, InvalidParam, InvalidTx, Limit, Missing, Rejection,
    SimulateCode, SimulateError, StoreFault,
};
pub use node::Node;
pub use types::BlockId;

//! OP Stack rules, kept apart from the Ethereum chain core (as reth keeps its optimism crates
//! beside the Ethereum ones): the chain's OP config and fork schedule (`config`), deposit
//! transactions (`deposit`) and OP transactions (`tx`), block execution with op-revm, the
//! OP Stack EVM op-reth and kona run (`block`), and the state a block reads (`state`); the
//! network upgrade transactions of a fork's first block (`upgrades`) and how a block on the
//! builder's own clock opens (`activation`).
//! docs/op-stack.md says what is done and what is not.

pub mod activation;
pub mod attributes;
pub mod block;
pub mod canyon;
pub mod config;
pub mod deposit;
pub mod dev;
pub mod evm;
pub mod fixture;
pub mod genesis;
pub mod header;
pub mod l1info;
pub mod receipt;
pub mod registry;
pub mod rpc;
pub mod state;
pub mod tx;
pub mod upgrades;

#[cfg(test)]
mod l1fee_vectors;

pub use config::{OpConfig, OpForks};
pub use deposit::TxDeposit;
pub use op_revm::OpSpecId;
pub use tx::OpTx;

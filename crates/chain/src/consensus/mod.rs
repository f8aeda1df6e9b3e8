//! Consensus rules for importing blocks built elsewhere: reading a blocks file, proof-of-work
//! rewards and difficulty, the Merge by total difficulty, base fee and blob gas per fork,
//! and header checks. Pure functions over alloy types; executing the block is not here.
//!
//! Import order for one block, given its parent:
//! 1. [`check_header`], [`check_body`] and [`check_uncles`] (no state needed; the
//!    uncles need the last seven ancestors);
//! 2. execute: pre-block system calls, transactions (receipts per [`receipts`]),
//!    post-block requests, then [`block_rewards`] (proof of work) or withdrawals;
//! 3. [`check_executed`] with the roots execution produced;
//! 4. carry [`total_difficulty`] forward for the next block's parent.

pub mod base_fee;
pub mod blob;
pub mod block_file;
pub mod dao;
pub mod difficulty;
pub mod error;
pub mod header;
pub mod next;
pub mod receipts;
pub mod rewards;
pub mod uncles;

pub use base_fee::{gas_limit_bounds, next_base_fee, MIN_GAS_LIMIT};
pub use blob::{blob_base_fee, blob_gas_used, header_blob_base_fee, next_excess_blob_gas};
pub use block_file::{BlockReader, FileBlock};
pub use dao::{is_dao_fork_block, DAO_DRAIN_LIST, DAO_REFUND_CONTRACT};
pub use difficulty::{ethash_difficulty, expects_proof_of_stake, total_difficulty};
pub use error::{Basis, BlockFileError, ConsensusError, Field, Found, Malformed, Part, Rule, Subject};
pub use header::{check_body, check_executed, check_header, Executed, Parent};
pub use next::{next_header, NextBlock};
pub use rewards::{block_reward, block_rewards};
pub use uncles::{check_uncles, Ancestor};

//! op-revm's EVM for one block, as every OP block runs on it: the fork's spec, the chain id,
//! the block's environment, and the L1 block info op-revm reads from L1Block on the block's
//! first non-deposit transaction. The node's pre-confirming builder and `OpBlockBuilder`
//! run their transactions on it.

use op_revm::api::builder::DefaultOpEvm;
use op_revm::{DefaultOp, L1BlockInfo, OpBuilder, OpContext, OpSpecId};
use revm::context::{BlockEnv, CfgEnv, Context};
use revm::Database;

/// The EVM of an OP block over the database `DB`.
pub type OpBlockEvm<DB> = DefaultOpEvm<OpContext<DB>>;

/// The EVM of a block with environment `block` under `spec` on chain `chain_id`.
pub fn block_evm<DB: Database>(db: DB, block: BlockEnv, spec: OpSpecId, chain_id: u64) -> OpBlockEvm<DB> {
    block_context(db, block, spec, chain_id).build_op()
}

/// The context `block_evm` runs in, for an EVM with an inspector (a trace's replay).
pub fn block_context<DB: Database>(db: DB, block: BlockEnv, spec: OpSpecId, chain_id: u64) -> OpContext<DB> {
    let mut cfg = CfgEnv::new_with_spec(spec);
    cfg.chain_id = chain_id;
    Context::op().with_db(db).with_block(block).with_cfg(cfg).with_chain(L1BlockInfo::default())
}

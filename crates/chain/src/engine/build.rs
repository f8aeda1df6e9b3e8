//! Building the block a payload job asks for with exactly the attributes' transactions
//! (`noTxPool`): crates/op's `execute` on the parent's state, read from the store (the
//! in-flight blocks' trie diffs included), as derivation replays a block.

use alloy_consensus::{Header, Transaction as _};
use alloy_primitives::{Bytes, B256, U256};
use preconf_op::block::{execute, Attributes, OpBlockError, OpExecutedBlock};
use preconf_op::{OpConfig, OpTx};
use preconf_trie::{Nibbles, NodeReader, TrieResult};
use revm::bytecode::Bytecode;
use revm::database_interface::DatabaseRef;
use revm::state::AccountInfo;

use super::types::{BuiltPayload, PayloadAttributes, PayloadId};
use crate::error::{AttributesFault, ChainError, ChainResult};
use crate::state::StateView;

/// A stored block's state for revm and for the trie: what `execute` reads.
struct ParentState<'a> {
    state: StateView,
    trie: Box<dyn NodeReader + 'a>,
}

impl DatabaseRef for ParentState<'_> {
    type Error = ChainError;
    fn basic_ref(&self, address: alloy_primitives::Address) -> Result<Option<AccountInfo>, ChainError> {
        self.state.basic_ref(address)
    }
    fn code_by_hash_ref(&self, hash: B256) -> Result<Bytecode, ChainError> {
        self.state.code_by_hash_ref(hash)
    }
    fn storage_ref(&self, address: alloy_primitives::Address, index: U256) -> Result<U256, ChainError> {
        self.state.storage_ref(address, index)
    }
    fn block_hash_ref(&self, number: u64) -> Result<B256, ChainError> {
        self.state.block_hash_ref(number)
    }
}

impl NodeReader for ParentState<'_> {
    fn account_node(&self, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        self.trie.account_node(path)
    }
    fn storage_node(&self, owner: &B256, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        self.trie.storage_node(owner, path)
    }
}

/// The block `attributes` describe on `parent` (a stored block whose state `state` is).
pub fn build_exact(
    op: &OpConfig,
    parent: &Header,
    attributes: &PayloadAttributes,
    state: StateView,
) -> ChainResult<OpExecutedBlock> {
    let snapshot = state.snapshot.clone();
    let trie = snapshot.trie_reader_at(parent.number)?;
    let parent_state = ParentState { state, trie };
    build_on(op, parent, attributes, &parent_state)
}

/// The block `attributes` describe on `parent`, over any state that reads accounts and trie
/// nodes: the store's (a node), or a block's witness (the conformance fixtures).
pub fn build_on<S>(
    op: &OpConfig,
    parent: &Header,
    attributes: &PayloadAttributes,
    state: &S,
) -> ChainResult<OpExecutedBlock>
where
    S: DatabaseRef<Error: revm::database_interface::DBErrorMarker + std::fmt::Display> + NodeReader,
{
    let attrs = Attributes {
        timestamp: attributes.timestamp,
        prev_randao: attributes.prev_randao,
        fee_recipient: attributes.fee_recipient,
        parent_beacon_block_root: attributes.parent_beacon_block_root,
        gas_limit: attributes.gas_limit.unwrap_or(parent.gas_limit),
        transactions: attributes.transactions.clone(),
        eip1559_params: attributes.eip1559_params,
        min_base_fee: attributes.min_base_fee,
    };
    execute(op, parent, &attrs, state).map_err(|e| {
        let fault = match e {
            OpBlockError::Transaction { index, reason } => AttributesFault::Transaction { index, reason },
            other => AttributesFault::Execution(other.to_string()),
        };
        ChainError::from(crate::error::EngineError::from(fault))
    })
}

/// What getPayload hands back for a block built for job `id`.
pub fn built_payload(id: PayloadId, block: OpExecutedBlock, attributes: &PayloadAttributes) -> BuiltPayload {
    let block_value = block_value(&block);
    BuiltPayload {
        id,
        hash: block.header.hash_slow(),
        transactions: block.txs.iter().map(|t| t.tx.encoded_2718().into()).collect(),
        withdrawals: attributes.withdrawals.clone(),
        header: block.header,
        block_value,
    }
}

/// What the fee recipient earns: every non-deposit transaction's priority fee.
pub fn block_value(block: &OpExecutedBlock) -> U256 {
    priority_fees(&block.header, block.txs.iter().map(|t| (&t.tx, t.gas_used)))
}

/// The priority fees of `txs` (each with its gas used) at `header`'s base fee; deposits pay
/// none. A built payload's and a sequenced block's `blockValue`.
pub fn priority_fees<'a>(header: &Header, txs: impl Iterator<Item = (&'a OpTx, u64)>) -> U256 {
    let base_fee = header.base_fee_per_gas.unwrap_or_default();
    txs.filter(|(tx, _)| !tx.is_deposit())
        .map(|(tx, gas_used)| U256::from(tx.effective_tip_per_gas(base_fee).unwrap_or_default()) * U256::from(gas_used))
        .sum()
}

//! Importing an OP chain's blocks: the body's rules and the execution of a block whose
//! transactions may be deposits (type 0x7E, the L1-info deposit first), on op-revm
//! through the same EVM the builder uses (`BlockEvm`): deposits mint and pay no fee, every
//! other transaction pays the L1 data fee (and from Isthmus the operator fee) the block's
//! L1-info deposit sets. What differs from an Ethereum block: no uncles, rewards,
//! withdrawals or requests; Canyon's create2 deployer at its first block; deposit
//! receipts (with the nonce from Canyon); Isthmus's `withdrawalsRoot` (the
//! L2ToL1MessagePasser's storage root, checked after execution); Jovian's DA footprint in
//! `blobGasUsed`.

use std::sync::Arc;

use alloy_consensus::{proofs, Block, Eip658Value, Header, Receipt};
use alloy_eips::eip7685::EMPTY_REQUESTS_HASH;
use alloy_eips::{eip2935, eip4788};
use alloy_primitives::{Address, Bloom, Bytes, KECCAK256_EMPTY};
use preconf_op::block::message_passer_root;
use preconf_op::canyon::create2_deployer_state;
use preconf_op::{OpConfig, OpSpecId, OpTx};
use preconf_trie::OrderedTrie;
use revm::database::CacheDB;
use revm::primitives::hardfork::SpecId;

use super::error::{ImportError, TxFault};
use super::execute::ExecutedBlock;
use crate::changes::StateChanges;
use crate::consensus::{Basis, ConsensusError, Executed, Field, Found, Rule, Subject};
use crate::error::{ChainError, InternalError};
use crate::exec::block_evm::{BlockEvm, TxRefusal};
use crate::exec::{errors::invalid_tx, ExecBlock};
use crate::spec::ChainSpec;
use crate::state::{CodeCache, StateView};
use crate::store::{trie, StoreSnapshot};
use crate::types::ExecutedTx;

/// The rules between an OP block's header and its body: the transactions root, no uncles,
/// and from Canyon an empty withdrawals list (the header's root is the empty root before
/// Isthmus, the message passer's storage root from Isthmus: checked after execution).
pub fn check_body(spec: &ChainSpec, block: &Block<OpTx>) -> Result<(), ImportError> {
    let header = &block.header;
    let body = &block.body;
    let n = header.number;
    let fail = |field, subject, found, basis, rule| ConsensusError::with(n, field, subject, found, basis, rule);
    let root = proofs::calculate_transaction_root(&body.transactions);
    if root != header.transactions_root {
        let (found, rule) = (Found::value(header.transactions_root), Rule::value(root));
        return Err(fail(Field::TransactionsRoot, Subject::Header, found, Basis::Body, rule).into());
    }
    if !body.ommers.is_empty() {
        let found = Found::Uncles(body.ommers.len());
        return Err(fail(Field::Ommers, Subject::Block, found, Basis::Rules, Rule::AtMost(0)).into());
    }
    let canyon = spec.is_shanghai(header.timestamp);
    let withdrawals = body.withdrawals.as_ref().map(|w| w.len());
    match (canyon, withdrawals) {
        (true, Some(0)) | (false, None) => {}
        (true, None) => {
            let (found, rule) = (Found::Absent, Rule::Present);
            return Err(fail(Field::WithdrawalsRoot, Subject::BodyWithdrawals, found, Basis::Rules, rule).into());
        }
        (false, Some(_)) => {
            let (found, rule) = (Found::Present, Rule::Absent);
            return Err(fail(Field::WithdrawalsRoot, Subject::BodyWithdrawals, found, Basis::Rules, rule).into());
        }
        (true, Some(len)) => {
            let (found, rule) = (Found::value(len), Rule::AtMost(0));
            return Err(fail(Field::WithdrawalsRoot, Subject::BodyWithdrawals, found, Basis::Rules, rule).into());
        }
    }
    let isthmus = spec.op().is_some_and(|op| op.is_active(OpSpecId::ISTHMUS, header.timestamp));
    if canyon && !isthmus {
        let found = header.withdrawals_root;
        if found != Some(alloy_consensus::EMPTY_ROOT_HASH) {
            let rule = Rule::value(alloy_consensus::EMPTY_ROOT_HASH);
            return Err(fail(Field::WithdrawalsRoot, Subject::Header, Found::show(found), Basis::Body, rule).into());
        }
    }
    // OP blocks carry no blobs: `blobGasUsed` is zero from Ecotone until Jovian makes it the
    // DA footprint (checked after execution).
    let jovian = spec.op().is_some_and(|op| op.is_active(OpSpecId::JOVIAN, header.timestamp));
    if spec.is_cancun(header.timestamp) && !jovian && header.blob_gas_used != Some(0) {
        let found = Found::show(header.blob_gas_used);
        return Err(fail(Field::BlobGasUsed, Subject::Header, found, Basis::Body, Rule::value(0)).into());
    }
    Ok(())
}

/// Every transaction's sender: a deposit's `from`, or the signer of any other.
pub fn senders(block: &Block<OpTx>) -> Result<Vec<Address>, ImportError> {
    super::error::recover_senders(block.header.number, &block.body.transactions, |tx| (tx.hash(), tx.sender()))
}

/// Executes the OP block `block` (transactions sent by `senders`) on its parent's stored
/// state, and checks what only execution gives beyond Ethereum's checks: Isthmus's
/// withdrawals root and Jovian's DA footprint.
pub fn execute_block(
    spec: &ChainSpec,
    op: &OpConfig,
    snapshot: &Arc<StoreSnapshot>,
    codes: &Arc<CodeCache>,
    parent: &Header,
    block: &Block<OpTx>,
    senders: &[Address],
) -> Result<ExecutedBlock, ImportError> {
    let header = &block.header;
    let number = header.number;
    let spec_id = spec.spec_for_header(header);
    let op_spec = op.spec_at(header.timestamp);
    let parent_state = StateView { snapshot: snapshot.clone(), block: number - 1, overlay: None, codes: codes.clone() };
    let mut run = Run {
        spec_id,
        evm: BlockEvm::new(CacheDB::new(parent_state), spec, &ExecBlock::from_header(header)),
        changes: StateChanges::default(),
    };
    let in_block = |e: ChainError| ImportError::Block { number, reason: super::BlockFault::SystemCall(Box::new(e)) };
    // EIP-4788 from Ecotone (Cancun's EVM), EIP-2935 from Isthmus (Prague's), each skipped
    // when its contract is absent, as op-geth does.
    if op_spec.is_enabled_in(OpSpecId::ECOTONE) {
        let root = header.parent_beacon_block_root.unwrap_or_default();
        run.system_call(eip4788::BEACON_ROOTS_ADDRESS, root.0.into()).map_err(in_block)?;
    }
    if op_spec.is_enabled_in(OpSpecId::ISTHMUS) {
        run.system_call(eip2935::HISTORY_STORAGE_ADDRESS, header.parent_hash.0.into()).map_err(in_block)?;
    }
    if op.is_first_block_of(OpSpecId::CANYON, header.timestamp, parent.timestamp) {
        run.set_create2_deployer().map_err(in_block)?;
    }
    let txs = run.transactions(header, op_spec, &block.body.transactions, senders)?;

    // The parent's trie (the head's on an import; an earlier block's for a sibling the
    // Engine API brings), with blocks still being committed laid over the store's.
    let base = snapshot.trie_reader_at(number - 1)?;
    let base = &*base;
    let (state_root, trie) = trie::state_root(&base, &run.changes)?;
    let mut receipts = OrderedTrie::default();
    let mut logs_bloom = Bloom::default();
    for t in &txs {
        t.receipt.logs.iter().for_each(|l| logs_bloom.accrue_log(l));
        receipts.push(Bytes::from(t.receipt_2718()));
    }
    let c = |field, found: Found, rule: Rule| {
        ConsensusError::with(number, field, Subject::Header, found, Basis::Execution, rule)
    };
    if op_spec.is_enabled_in(OpSpecId::ISTHMUS) {
        let root = message_passer_root(&trie, &base).map_err(ChainError::from)?;
        if header.withdrawals_root != Some(root) {
            return Err(c(Field::WithdrawalsRoot, Found::show(header.withdrawals_root), Rule::value(root)).into());
        }
    }
    if op_spec.is_enabled_in(OpSpecId::JOVIAN) {
        let footprint = da_footprint(&mut run, &block.body.transactions)?;
        if header.blob_gas_used != Some(footprint) {
            return Err(c(Field::BlobGasUsed, Found::show(header.blob_gas_used), Rule::value(footprint)).into());
        }
    }
    let executed = Executed {
        state_root,
        receipts_root: receipts.root(),
        logs_bloom,
        gas_used: txs.last().map_or(0, |t| t.receipt.cumulative_gas_used),
        // OP chains carry no EIP-7685 requests: from Isthmus the hash of none.
        requests_hash: op_spec.is_enabled_in(OpSpecId::ISTHMUS).then_some(EMPTY_REQUESTS_HASH),
    };
    Ok(ExecutedBlock { txs, changes: run.changes, executed, trie })
}

/// Jovian: the block's DA footprint (its `blobGasUsed`), the sum over its non-deposits of
/// the Fjord size estimate times the scalar the L1-info deposit left in L1Block.
fn da_footprint(run: &mut Run, txs: &[OpTx]) -> Result<u64, ImportError> {
    let scalar = op_revm::L1BlockInfo::fetch_da_footprint_gas_scalar(run.evm.db()).map_err(ImportError::Chain)?;
    let footprint = txs
        .iter()
        .filter(|t| !t.is_deposit())
        .map(|t| (op_revm::estimate_tx_compressed_size(&t.encoded_2718()) / 1_000_000).saturating_mul(scalar as u64))
        .fold(0u64, u64::saturating_add);
    Ok(footprint)
}

/// One OP block's execution in progress.
struct Run {
    spec_id: SpecId,
    evm: BlockEvm<StateView>,
    changes: StateChanges,
}

impl Run {
    fn transactions(
        &mut self,
        header: &Header,
        op_spec: OpSpecId,
        txs: &[OpTx],
        senders: &[Address],
    ) -> Result<Vec<ExecutedTx>, ImportError> {
        let number = header.number;
        let canyon = op_spec.is_enabled_in(OpSpecId::CANYON);
        let mut out = Vec::with_capacity(txs.len());
        let mut cumulative = 0u64;
        for (index, (tx, sender)) in txs.iter().zip(senders).enumerate() {
            let invalid = |reason: TxFault| ImportError::Transaction { number, index, hash: tx.hash(), reason };
            // Before Regolith a deposit uses no block gas.
            let uses_block_gas = !tx.is_deposit() || op_spec.is_enabled_in(OpSpecId::REGOLITH);
            let remaining = header.gas_limit.saturating_sub(cumulative);
            if uses_block_gas && tx.gas_limit() > remaining {
                return Err(invalid(TxFault::GasLimitReached { gas_limit: tx.gas_limit(), remaining }));
            }
            // From Canyon a deposit's receipt records its sender's nonce before it ran.
            let deposit_nonce = match tx.is_deposit() && canyon {
                true => {
                    let account = self.evm.db().load_account(*sender).map_err(ImportError::Chain)?;
                    Some(account.info().map_or(0, |i| i.nonce))
                }
                false => None,
            };
            let raw = Bytes::from(tx.encoded_2718());
            let run = match self.evm.transact(tx, *sender, &raw) {
                Ok(run) => run,
                Err(TxRefusal::Invalid(e)) => return Err(invalid(TxFault::Invalid(Box::new(invalid_tx(&e, *sender))))),
                Err(TxRefusal::Failed(cause)) => return Err(invalid(TxFault::Evm(cause))),
            };
            self.changes.apply_evm_state(&run.state, self.spec_id);
            self.evm.commit(run.state);
            cumulative += run.gas_used;
            let receipt =
                Receipt { status: Eip658Value::Eip658(run.success), cumulative_gas_used: cumulative, logs: run.logs };
            out.push(ExecutedTx { tx: tx.clone(), sender: *sender, receipt, gas_used: run.gas_used, deposit_nonce });
        }
        Ok(out)
    }

    /// A system call folded into the block; skipped when its contract has no code.
    fn system_call(&mut self, address: Address, input: Bytes) -> Result<(), ChainError> {
        let db = self.evm.db();
        let exists = db.load_account(address)?.info().is_some_and(|i| i.code_hash != KECCAK256_EMPTY);
        if !exists {
            return Ok(());
        }
        let out =
            self.evm.system_call(address, input).map_err(|source| InternalError::SystemCall { address, source })?;
        self.changes.apply_evm_state(&out.state, self.spec_id);
        self.evm.commit(out.state);
        Ok(())
    }

    /// Canyon's first block sets the create2 deployer's code, keeping the account's
    /// balance and nonce.
    fn set_create2_deployer(&mut self) -> Result<(), ChainError> {
        let state = create2_deployer_state(self.evm.db())?;
        self.changes.apply_evm_state(&state, self.spec_id);
        self.evm.commit(state);
        Ok(())
    }
}

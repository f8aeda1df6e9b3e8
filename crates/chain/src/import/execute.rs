//! Executing one imported block on its parent's stored state, under the rules its header
//! says: the pre-block system calls (EIP-4788, EIP-2935), the transactions with their
//! receipts (intermediate state roots before Byzantium), the requests (EIP-6110 deposits,
//! EIP-7002/7251 system calls), then the ethash rewards or the withdrawals. The result is
//! what the header must agree with (`consensus::check_executed`) and what the store writes.

use std::sync::Arc;

use alloy_consensus::{proofs, Block, Eip658Value, Header, Receipt, Transaction as _, TxEnvelope};
use alloy_eips::{eip7002, eip7251, eip7685::Requests};
use alloy_primitives::{Address, Bloom, Bytes, Log, KECCAK256_EMPTY, U256};
use preconf_trie::{Overlay, TrieAt, TrieDiff};
use revm::context_interface::result::{EVMError, ExecutionResult};
use revm::context_interface::JournalTr;
use revm::database::CacheDB;
use revm::handler::{ExecuteCommitEvm, ExecuteEvm, MainBuilder};
use revm::primitives::hardfork::SpecId;
use revm::state::{Account, AccountInfo, EvmState};
use revm::Database as _;

use super::deposits::deposit_requests;
use super::error::{BlockFault, ImportError, TxFault};
use crate::changes::StateChanges;
use crate::consensus::{
    block_rewards, is_dao_fork_block, receipts::uses_post_state_root, Executed, DAO_DRAIN_LIST, DAO_REFUND_CONTRACT,
};
use crate::error::{Cause, ChainError, ChainResult, InternalError};
use crate::exec::system::{self, SystemCalls};
use crate::exec::{errors::invalid_tx, evm_context_with_spec, tx_env_from_signed, Evm, ExecBlock, Mode};
use crate::spec::ChainSpec;
use crate::state::{CodeCache, StateView};
use crate::store::{trie, StoreSnapshot};
use crate::types::ExecutedTx;

/// Withdrawal amounts are in gwei (EIP-4895).
const GWEI: u64 = 1_000_000_000;

/// What executing a block produced.
pub struct ExecutedBlock {
    pub txs: Vec<ExecutedTx>,
    /// Every state change of the block (system calls, transactions, rewards, withdrawals).
    pub changes: StateChanges,
    /// The values the header is checked against.
    pub executed: Executed,
    /// The trie nodes the block changed, for the store.
    pub trie: TrieDiff,
}

/// Executes `block` (whose transactions were sent by `senders`) on the state `snapshot`
/// holds: its head must be the block's parent.
pub fn execute_block(
    spec: &ChainSpec,
    snapshot: &Arc<StoreSnapshot>,
    codes: &Arc<CodeCache>,
    block: &Block<TxEnvelope>,
    senders: &[Address],
) -> Result<ExecutedBlock, ImportError> {
    let header = &block.header;
    let number = header.number;
    let spec_id = spec.spec_for_header(header);
    let parent_state = StateView { snapshot: snapshot.clone(), block: number - 1, overlay: None, codes: codes.clone() };
    let ctx = evm_context_with_spec(
        CacheDB::new(parent_state),
        spec,
        &ExecBlock::from_header(header),
        Mode::Transaction,
        spec_id,
    );
    let base = snapshot.trie().latest();
    let mut run = Run {
        number,
        spec_id,
        evm: ctx.build_mainnet(),
        changes: StateChanges::default(),
        post_state: uses_post_state_root(spec_id).then(TrieDiff::default),
    };
    let in_block = |e: ChainError| ImportError::Block { number, reason: BlockFault::SystemCall(Box::new(e)) };
    if is_dao_fork_block(spec, number) {
        run.dao_refund(&base)?;
    }
    system::pre_block(&mut run, header, spec_id).map_err(in_block)?;
    let txs = run.transactions(header, &block.body.transactions, senders, &base)?;

    let requests = if spec_id.is_enabled_in(SpecId::PRAGUE) {
        let contract = spec.genesis.config.deposit_contract_address.unwrap_or_default();
        let logs = txs.iter().flat_map(|t| t.receipt.logs.iter());
        let deposits = deposit_requests(contract, logs)
            .map_err(|e| ImportError::Block { number, reason: BlockFault::Deposits(e) })?;
        let mut requests = Requests::default();
        requests.push_request_with_type(alloy_eips::eip6110::DEPOSIT_REQUEST_TYPE, deposits);
        let queued = system::post_block(&mut run, spec_id).map_err(in_block)?.unwrap_or_default();
        requests.extend(queued);
        Some(requests)
    } else {
        None
    };

    // Proof of work pays the miner and the uncles; proof of stake pays withdrawals.
    let mut credits = block_rewards(spec, header, &block.body.ommers);
    for w in block.body.withdrawals.iter().flatten() {
        credits.push((w.address, U256::from(w.amount) * U256::from(GWEI)));
    }
    run.credit(&credits).map_err(in_block)?;

    let (state_root, trie) = trie::state_root(&base, &run.changes)?;
    let receipts: Vec<_> = txs.iter().map(|t| t.receipt_envelope()).collect();
    let mut logs_bloom = Bloom::default();
    for r in &receipts {
        logs_bloom.accrue_bloom(r.logs_bloom());
    }
    let executed = Executed {
        state_root,
        receipts_root: proofs::calculate_receipt_root(&receipts),
        logs_bloom,
        gas_used: txs.last().map_or(0, |t| t.receipt.cumulative_gas_used),
        requests_hash: requests.map(|r| r.requests_hash()),
    };
    Ok(ExecutedBlock { txs, changes: run.changes, executed, trie })
}

/// One block's execution in progress.
struct Run {
    number: u64,
    spec_id: SpecId,
    evm: Evm<StateView>,
    changes: StateChanges,
    /// Before Byzantium: the trie nodes the block's transactions changed so far, over the
    /// parent's persisted trie, so each receipt's state root costs only what its
    /// transaction changed.
    post_state: Option<TrieDiff>,
}

impl Run {
    fn transactions(
        &mut self,
        header: &Header,
        txs: &[TxEnvelope],
        senders: &[Address],
        base: &TrieAt<'_>,
    ) -> Result<Vec<ExecutedTx>, ImportError> {
        let number = self.number;
        let mut out = Vec::with_capacity(txs.len());
        let mut cumulative = 0u64;
        for (index, (tx, sender)) in txs.iter().zip(senders).enumerate() {
            let invalid = |reason: TxFault| ImportError::Transaction { number, index, hash: *tx.tx_hash(), reason };
            let remaining = header.gas_limit - cumulative;
            if tx.gas_limit() > remaining {
                return Err(invalid(TxFault::GasLimitReached { gas_limit: tx.gas_limit(), remaining }));
            }
            let out_state = match self.evm.transact(tx_env_from_signed(tx, *sender)) {
                Ok(o) => o,
                Err(EVMError::Transaction(e)) => {
                    return Err(invalid(TxFault::Invalid(Box::new(invalid_tx(&e, *sender)))))
                }
                Err(EVMError::Database(e)) => return Err(e.into()),
                Err(e) => return Err(invalid(TxFault::Evm(Cause::new(e)))),
            };
            let status = match &mut self.post_state {
                Some(running) => {
                    let mut changed = StateChanges::default();
                    changed.apply_evm_state(&out_state.state, self.spec_id);
                    let (root, diff) = trie::state_root(&Overlay::new(running, base), &changed)?;
                    running.merge(diff);
                    Eip658Value::PostState(root)
                }
                None => Eip658Value::Eip658(out_state.result.is_success()),
            };
            self.changes.apply_evm_state(&out_state.state, self.spec_id);
            self.evm.commit(out_state.state);
            let result = out_state.result;
            let gas_used = result.tx_gas_used();
            cumulative += gas_used;
            let logs: Vec<Log> = match result {
                ExecutionResult::Success { logs, .. } => logs,
                _ => Vec::new(),
            };
            let receipt = Receipt { status, cumulative_gas_used: cumulative, logs };
            out.push(ExecutedTx::eth(tx.clone(), *sender, receipt, gas_used));
        }
        Ok(out)
    }

    /// The DAO fork block, before anything else: every drained account's balance moves to
    /// the refund contract, and each account is written even where it is left empty (clients
    /// create missing ones; before Spurious Dragon empty accounts stay in the state). Not
    /// through the journal: its pre-EIP-161 normalization drops the touch of an existing
    /// account left empty, which would lose the drained balances.
    fn dao_refund(&mut self, base: &TrieAt<'_>) -> Result<(), ImportError> {
        let db = &mut self.evm.ctx.journaled_state.database;
        let mut state = EvmState::default();
        let mut refund = U256::ZERO;
        for address in DAO_DRAIN_LIST {
            let mut info = db.basic(address)?.unwrap_or_default();
            refund += std::mem::take(&mut info.balance);
            state.insert(address, touched(info));
        }
        let mut info = db.basic(DAO_REFUND_CONTRACT)?.unwrap_or_default();
        info.balance += refund;
        state.insert(DAO_REFUND_CONTRACT, touched(info));
        // The first receipt's state root (before Byzantium) includes the refund.
        if let Some(running) = &mut self.post_state {
            let mut changed = StateChanges::default();
            changed.apply_evm_state(&state, self.spec_id);
            let (_, diff) = trie::state_root(&Overlay::new(running, base), &changed)?;
            running.merge(diff);
        }
        self.changes.apply_evm_state(&state, self.spec_id);
        self.evm.commit(state);
        Ok(())
    }

    /// Balance increments after the transactions (rewards, withdrawals), in order. They go
    /// through the EVM's journal so that, as for transactions, an increment of zero to an
    /// empty account touches it and EIP-161 removes it.
    fn credit(&mut self, credits: &[(Address, U256)]) -> ChainResult<()> {
        if credits.is_empty() {
            return Ok(());
        }
        let journal = &mut self.evm.ctx.journaled_state;
        for (address, amount) in credits {
            journal.balance_incr(*address, *amount)?;
        }
        let state = journal.finalize();
        self.changes.apply_evm_state(&state, self.spec_id);
        self.evm.commit(state);
        Ok(())
    }
}

/// An account as a state change to write.
fn touched(info: AccountInfo) -> Account {
    let mut account = Account::from(info);
    account.mark_touch();
    account
}

impl SystemCalls for Run {
    /// A system call folded into the block. The request contracts (EIP-7002, EIP-7251) must
    /// exist and succeed, or the block is invalid; the beacon-root and history contracts
    /// are skipped when absent, as geth does.
    fn system_call(&mut self, address: Address, input: Bytes) -> ChainResult<Option<Bytes>> {
        let required = address == eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS
            || address == eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS;
        let db = &mut self.evm.ctx.journaled_state.database;
        let exists = db.load_account(address)?.info().is_some_and(|i| i.code_hash != KECCAK256_EMPTY);
        if !exists {
            return match required {
                true => Err(InternalError::NoSystemContract(address).into()),
                false => Ok(None),
            };
        }
        let out = system::run(&mut self.evm, address, input)
            .map_err(|e| InternalError::SystemCall { address, source: Cause::new(e) })?;
        if required && !out.result.is_success() {
            return Err(InternalError::SystemCallUnsuccessful { address, result: Box::new(out.result) }.into());
        }
        let output = out.result.output().cloned();
        self.changes.apply_evm_state(&out.state, self.spec_id);
        self.evm.commit(out.state);
        Ok(output)
    }
}

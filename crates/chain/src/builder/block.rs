//! The block being built: its context, the EVM its transactions run on, what they did.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use alloy_consensus::{Header, Receipt, EMPTY_ROOT_HASH};
use alloy_primitives::{keccak256, Address, Bloom, Bytes, B256, KECCAK256_EMPTY};
use preconf_op::{OpSpecId, OpTx};
use preconf_trie::{OrderedTrie, TrieDiff};
use revm::database::CacheDB;
use revm::primitives::hardfork::SpecId;

use crate::chain_state::ChainState;
use crate::changes::StateChanges;
use crate::consensus::{next_header, NextBlock};
use crate::dev::clock::BlockContext;
use crate::error::{AttributesFault, Cause, ChainResult, Divergence, DropReason, EngineError, InternalError};
use crate::exec::block_evm::{BlockEvm, TxRefusal};
use crate::exec::system::{self, SystemCalls};
use crate::exec::{errors::invalid_tx, ExecBlock};
use crate::pool::PooledTx;
use crate::state::StateView;
use crate::types::ExecutedTx;
use crate::view::{ChainView, PendingBlock};

use crate::warm::WarmTrie;

pub struct OpenBlock {
    pub header: Header,
    pub spec_id: SpecId,
    /// Ethereum's EVM, or op-revm's on an OP chain (the chain spec's choice).
    pub evm: BlockEvm<StateView>,
    /// Everything the block changed so far (written to the store when it is sealed).
    pub changes: StateChanges,
    /// What changed since the last pre-confirmation (its overlay layer).
    pub tick: StateChanges,
    pub txs: Vec<Arc<ExecutedTx>>,
    pub gas_used: u64,
    pub preconf_index: u64,
    /// Transactions already announced in an earlier pre-confirmation.
    pub announced: usize,
    /// The trie paths of what the block changed, loaded ahead of the seal.
    pub warm: WarmTrie,
    /// The transactions' and receipts' encodings, tries and bloom, grown as each
    /// transaction executes: every pre-confirmation's header has the roots over all of
    /// them, and a tick must not encode and hash the whole block again.
    pub leaves: RootLeaves,
    /// The transactions the block opened with (an OP block's L1-info deposit): a block
    /// holding only these holds nothing to seal.
    pub opening: usize,
    /// An OP chain's block: the OP rules at its timestamp (deposit gas before Regolith,
    /// deposit receipts' nonce from Canyon, the message passer's `withdrawalsRoot` from
    /// Isthmus, the DA footprint from Jovian).
    op: Option<OpSpecId>,
    /// Jovian: the DA footprint gas scalar the block's L1-info deposit left in L1Block, read
    /// once the deposits ran (before the first other transaction), and the block's DA
    /// footprint so far (its `blobGasUsed`, bounded by the gas limit as its gas is).
    da_scalar: Option<u16>,
    da_footprint: u64,
    /// A fork's first block on the builder's own clock takes no pool transactions.
    no_tx_pool: bool,
}

fn is_request_queue(address: Address) -> bool {
    address == alloy_eips::eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS
        || address == alloy_eips::eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS
}

#[derive(Default)]
pub struct RootLeaves {
    /// EIP-2718 encodings of the transactions, in block order (stored at the seal).
    pub txs: Vec<Bytes>,
    /// EIP-2718 encodings of their receipts, with bloom.
    pub receipts: Vec<Bytes>,
    bloom: Bloom,
    tx_trie: OrderedTrie,
    receipt_trie: OrderedTrie,
}

impl RootLeaves {
    fn push(&mut self, etx: &ExecutedTx) {
        etx.receipt.logs.iter().for_each(|l| self.bloom.accrue_log(l));
        let tx = Bytes::from(etx.tx.encoded_2718());
        let receipt = Bytes::from(etx.receipt_2718());
        self.tx_trie.push(tx.clone());
        self.receipt_trie.push(receipt.clone());
        self.txs.push(tx);
        self.receipts.push(receipt);
    }
}

/// What a block opens with, before the pool's transactions.
#[derive(Clone, Copy)]
enum Opening<'a> {
    /// On an OP chain, the dev chain's L1-info deposit (a block on the node's own clock).
    DevL1Info,
    /// These transactions, in order: op-node's attributes' (sequencer mode), or none (a
    /// flashblocks follower: every transaction comes from the sequencer's flashblocks).
    Given(&'a [Bytes]),
}

/// What executing one pooled transaction came to.
pub enum Outcome {
    Included,
    /// It does not fit in the block's remaining gas.
    NoRoom,
    /// It can never execute as it is (nonce, funds, ...): dropped with the reason.
    Invalid(DropReason),
}

pub fn unix_now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or_default()
}

impl OpenBlock {
    /// Opens the block after `view`'s head: its context, and the pre-block system calls.
    pub fn open(chain: &ChainState, view: &ChainView) -> ChainResult<Self> {
        Self::open_at(chain, view, BlockContext::default())
    }

    /// `open`, with the context the test methods set (`--dev`): timestamp, base fee,
    /// coinbase, gas limit.
    /// Driven by the Engine API the block opened here is only a placeholder until op-node
    /// starts one (it is never shown or sealed): it runs no L1-info deposit of its own, whose
    /// format the chain's L1Block may not take.
    pub fn open_at(chain: &ChainState, view: &ChainView, context: BlockContext) -> ChainResult<Self> {
        let parent = &view.head.header;
        let parent_hash = view.head_hash();
        let number = parent.number + 1;
        let timestamp = context.timestamp.unwrap_or_else(|| (unix_now_ms() / 1000).max(parent.timestamp + 1));
        let next = NextBlock {
            timestamp,
            beneficiary: context.beneficiary.unwrap_or_else(|| chain.coinbase()),
            gas_limit: context.gas_limit.unwrap_or(parent.gas_limit),
            mix_hash: keccak256([parent_hash.as_slice(), &number.to_be_bytes()].concat()),
            ..Default::default()
        };
        let mut header = next_header(chain.spec(), parent, parent_hash, next);
        // `anvil_setNextBlockBaseFeePerGas`, on a chain with a base fee.
        if let (Some(fee), Some(_)) = (context.base_fee, header.base_fee_per_gas) {
            header.base_fee_per_gas = Some(fee);
        }
        let opening = if chain.engine_driven() { Opening::Given(&[]) } else { Opening::DevL1Info };
        Self::with_header(chain, view, header, opening)
    }

    /// The block op-node's attributes describe (sequencer mode): `header` is their context,
    /// and the block opens with their transactions (the L1-info deposit, user deposits) in
    /// order. A transaction that cannot run is the attributes' fault: the block is not opened.
    pub fn from_attributes(chain: &ChainState, view: &ChainView, header: Header, txs: &[Bytes]) -> ChainResult<Self> {
        Self::with_header(chain, view, header, Opening::Given(txs))
    }

    /// A block another node is building (a flashblocks follower): its context as the
    /// builder sent it and nothing run yet but the pre-block system calls; every
    /// transaction, an OP block's L1-info deposit included, comes from the builder.
    pub(crate) fn following(chain: &ChainState, view: &ChainView, header: Header) -> ChainResult<Self> {
        Self::with_header(chain, view, header, Opening::Given(&[]))
    }

    /// Continues the block another leader was building, as the log shows it: the same
    /// context, its transactions executed again in the same order, each checked to come out
    /// as it was shown (receipt and gas), and the pre-confirmation count going on from there.
    pub fn resume(chain: &ChainState, view: &ChainView, shown: &PendingBlock) -> ChainResult<Self> {
        let mut header = shown.block.header.clone();
        header.gas_used = 0;
        header.logs_bloom = Bloom::default();
        header.transactions_root = EMPTY_ROOT_HASH;
        header.receipts_root = EMPTY_ROOT_HASH;
        header.state_root = B256::ZERO;
        let number = header.number;
        // An OP block's L1-info deposit is the block's own (opening it pushed it again); a
        // block op-node's attributes opened is run again from its first transaction.
        let opening = if chain.engine_driven() { Opening::Given(&[]) } else { Opening::DevL1Info };
        let mut block = Self::with_header(chain, view, header, opening)?;
        let opened = block.opening;
        for (i, was) in shown.block.txs.iter().enumerate() {
            let cannot = |why| InternalError::CannotContinue { number, index: i, hash: was.hash(), why: Box::new(why) };
            if i >= opened {
                let raw = Bytes::from(was.tx.encoded_2718());
                match block.run(was.tx.clone(), was.sender, &raw) {
                    Outcome::Included => {}
                    Outcome::NoRoom => return Err(cannot(Divergence::NoRoom).into()),
                    Outcome::Invalid(reason) => return Err(cannot(Divergence::Invalid(reason)).into()),
                }
            }
            let now = &block.txs[i]; // opened with, or just included
                                     // The opening deposit must be the one shown too (the same L1 values).
            if now.hash() != was.hash() || now.receipt != was.receipt || now.gas_used != was.gas_used {
                return Err(cannot(Divergence::Differs {
                    gas: now.gas_used,
                    shown_gas: was.gas_used,
                    status: now.receipt.status,
                    shown_status: was.receipt.status,
                    logs: now.receipt.logs.len(),
                    shown_logs: was.receipt.logs.len(),
                })
                .into());
            }
        }
        // Everything so far is already shown: the next pre-confirmation starts empty.
        block.tick = StateChanges::default();
        block.preconf_index = shown.preconf_index();
        block.announced = block.txs.len();
        Ok(block)
    }

    /// The block after `view`'s head with this context, and its pre-block system calls.
    fn with_header(chain: &ChainState, view: &ChainView, header: Header, opening: Opening) -> ChainResult<Self> {
        let parent = &view.head.header;
        let spec = chain.spec();
        let spec_id = spec.spec_at(header.number, header.timestamp);
        let base = view.state_at(parent.number);
        let evm = BlockEvm::new(CacheDB::new(base), spec, &ExecBlock::from_header(&header));
        let op = spec.op().map(|op| op.spec_at(header.timestamp));
        let mut block = OpenBlock {
            header,
            spec_id,
            evm,
            changes: StateChanges::default(),
            tick: StateChanges::default(),
            txs: Vec::new(),
            gas_used: 0,
            preconf_index: 0,
            announced: 0,
            warm: WarmTrie::new(view.snapshot.clone()),
            leaves: RootLeaves::default(),
            opening: 0,
            op,
            da_scalar: None,
            da_footprint: 0,
            no_tx_pool: false,
        };
        let header = block.header.clone();
        system::pre_block(&mut block, &header, spec_id)?;
        if spec.op().is_some_and(|op| op.is_first_block_of(OpSpecId::CANYON, header.timestamp, parent.timestamp)) {
            block.set_create2_deployer()?;
        }
        if let Opening::Given(txs) = opening {
            block.run_given(txs)?;
        }
        // Every OP block opens with the L1-info deposit: here, with no L1, of fixed values; a
        // fork's first block then with the fork's upgrade deposits, as op-node derives them.
        if let (Some(op), Opening::DevL1Info) = (spec.op(), opening) {
            let opened = chain.config().op_l1.opening(op, header.number, header.timestamp, parent.timestamp);
            for deposit in opened.deposits {
                let (from, to) = (deposit.from, deposit.to.to().copied().unwrap_or(deposit.from));
                let raw = Bytes::from(deposit.encoded_2718());
                let failed = |reason: String| InternalError::SystemCall {
                    address: to,
                    source: Cause::new(std::io::Error::other(reason)),
                };
                match block.run(OpTx::Deposit(deposit), from, &raw) {
                    Outcome::Included => {}
                    Outcome::NoRoom => return Err(failed("the opening deposits do not fit in the block".into()).into()),
                    Outcome::Invalid(reason) => return Err(failed(reason.to_string()).into()),
                }
            }
            block.no_tx_pool = opened.no_tx_pool;
            block.opening = block.txs.len();
        }
        // eth_coinbase's answer where the block is not shown (`--no-preconf`).
        chain.set_next_coinbase(header.beneficiary);
        Ok(block)
    }

    /// Canyon's first block sets the create2 deployer's code (crates/op canyon.rs), before
    /// its transactions.
    fn set_create2_deployer(&mut self) -> ChainResult<()> {
        let state = preconf_op::canyon::create2_deployer_state(self.evm.db())?;
        self.record(&state);
        self.evm.commit(state);
        Ok(())
    }

    fn op_active(&self, fork: OpSpecId) -> bool {
        self.op.is_some_and(|spec| spec.is_enabled_in(fork))
    }

    /// Jovian: the DA footprint of `tx` (EIP-2718 `raw`), with the scalar the L1-info
    /// deposit left in L1Block (read at the block's first transaction that is not a deposit:
    /// every deposit comes before it); 0 for a deposit or before Jovian.
    fn da_footprint_of(&mut self, tx: &OpTx, raw: &[u8]) -> ChainResult<u64> {
        if tx.is_deposit() || !self.op_active(OpSpecId::JOVIAN) {
            return Ok(0);
        }
        let scalar = match self.da_scalar {
            Some(scalar) => scalar,
            None => *self.da_scalar.insert(op_revm::L1BlockInfo::fetch_da_footprint_gas_scalar(self.evm.db())?),
        };
        Ok(preconf_op::l1info::da_footprint(raw, scalar))
    }

    /// Runs op-node's transactions into the block just opened, in order.
    fn run_given(&mut self, txs: &[Bytes]) -> ChainResult<()> {
        let fault = |index, reason: String| EngineError::from(AttributesFault::Transaction { index, reason });
        for (index, raw) in txs.iter().enumerate() {
            let tx = OpTx::decode_2718(raw).map_err(|e| fault(index, e.to_string()))?;
            let sender = tx.sender().map_err(|e| fault(index, e.to_string()))?;
            match self.run(tx, sender, raw) {
                Outcome::Included => {}
                Outcome::NoRoom => return Err(fault(index, "does not fit in the block's gas limit".into()).into()),
                Outcome::Invalid(reason) => return Err(fault(index, reason.to_string()).into()),
            }
        }
        self.opening = self.txs.len();
        Ok(())
    }

    /// The sender's nonce in the block so far.
    pub fn nonce_of(&mut self, sender: &Address) -> u64 {
        let db = self.evm.db();
        db.load_account(*sender).ok().and_then(|a| a.info()).map(|i| i.nonce).unwrap_or(0)
    }

    /// A fork's first block on the builder's own clock: it takes no pool transaction.
    pub fn takes_no_pool_txs(&self) -> bool {
        self.no_tx_pool
    }

    pub fn execute(&mut self, ptx: &PooledTx) -> Outcome {
        if self.no_tx_pool {
            return Outcome::NoRoom;
        }
        self.run(OpTx::Eth(ptx.tx.clone()), ptx.sender, &ptx.raw)
    }

    /// Runs `tx` (EIP-2718 encoding `raw`) from `sender` into the block.
    pub(crate) fn run(&mut self, tx: OpTx, sender: Address, raw: &Bytes) -> Outcome {
        // Before Regolith a deposit uses no block gas.
        let uses_block_gas = !tx.is_deposit() || self.op.is_none_or(|spec| spec.is_enabled_in(OpSpecId::REGOLITH));
        if uses_block_gas && self.gas_used + tx.gas_limit() > self.header.gas_limit {
            return Outcome::NoRoom;
        }
        let da_footprint = match self.da_footprint_of(&tx, raw) {
            Ok(footprint) => footprint,
            Err(e) => return Outcome::Invalid(DropReason::ExecutionFailed(Cause::new(e))),
        };
        // One whose footprint alone is above the limit fits in no block: it would wait forever.
        if da_footprint > self.header.gas_limit {
            let why = format!("DA footprint {da_footprint} above the block gas limit {}", self.header.gas_limit);
            return Outcome::Invalid(DropReason::ExecutionFailed(Cause::new(std::io::Error::other(why))));
        }
        if self.da_footprint + da_footprint > self.header.gas_limit {
            return Outcome::NoRoom;
        }
        // From Canyon a deposit's receipt records its sender's nonce before it ran.
        let deposit_nonce = match tx.is_deposit() && self.op_active(OpSpecId::CANYON) {
            true => Some(self.nonce_of(&sender)),
            false => None,
        };
        match self.evm.transact(&tx, sender, raw) {
            Ok(out) => {
                self.record(&out.state);
                self.evm.commit(out.state);
                self.gas_used += out.gas_used;
                self.da_footprint += da_footprint;
                let receipt =
                    Receipt { status: out.success.into(), cumulative_gas_used: self.gas_used, logs: out.logs };
                let etx = ExecutedTx { tx, sender, receipt, gas_used: out.gas_used, deposit_nonce };
                self.leaves.push(&etx);
                self.txs.push(Arc::new(etx));
                Outcome::Included
            }
            Err(TxRefusal::Invalid(e)) => Outcome::Invalid(DropReason::Invalid(invalid_tx(&e, sender))),
            Err(TxRefusal::Failed(cause)) => Outcome::Invalid(DropReason::ExecutionFailed(cause)),
        }
    }

    fn record(&mut self, state: &revm::state::EvmState) {
        for (address, account) in state.iter().filter(|(_, a)| a.is_touched()) {
            // A new or destroyed account's stored storage is not read: no slot paths.
            let fresh = account.is_created() || account.is_selfdestructed();
            let slots = account.storage.iter().filter(|(_, v)| !fresh && v.is_changed()).map(|(k, _)| *k);
            self.warm.changed(*address, slots);
        }
        self.changes.apply_evm_state(state, self.spec_id);
        self.tick.apply_evm_state(state, self.spec_id);
    }

    /// The header as the transactions so far make it (roots of transactions and receipts,
    /// bloom, gas used); the state root is the seal's.
    pub fn current_header(&mut self) -> Header {
        let mut header = self.header.clone();
        header.gas_used = self.gas_used;
        header.logs_bloom = self.leaves.bloom;
        header.transactions_root = self.leaves.tx_trie.root();
        header.receipts_root = self.leaves.receipt_trie.root();
        if self.op_active(OpSpecId::JOVIAN) {
            header.blob_gas_used = Some(self.da_footprint);
        }
        header
    }
}

impl OpenBlock {
    /// The header fields only the sealed state gives beyond its root: from Isthmus, the
    /// L2ToL1MessagePasser's storage root as `withdrawalsRoot` (read from the post-state:
    /// the block's trie diff over its parent's trie).
    pub fn seal_fields(&self, header: &mut Header, trie: &TrieDiff) -> ChainResult<()> {
        if self.op_active(OpSpecId::ISTHMUS) {
            let root = self.warm.with_parent(|parent| {
                preconf_op::block::message_passer_root(trie, &parent)
                    .map_err(|e| InternalError::Trie(Cause::new(e)).into())
            })?;
            header.withdrawals_root = Some(root);
        }
        Ok(())
    }
}

impl SystemCalls for OpenBlock {
    /// Runs a system call inside the open block and folds its state changes in.
    fn system_call(&mut self, address: Address, input: Bytes) -> ChainResult<Option<Bytes>> {
        // OP chains have no EIP-7685 requests (Isthmus's `requestsHash` is the empty list's),
        // even where the genesis holds the request contracts (the dev chain's).
        if self.op.is_some() && is_request_queue(address) {
            return Ok(None);
        }
        let exists = self.evm.db().load_account(address)?.info().is_some_and(|i| i.code_hash != KECCAK256_EMPTY);
        if !exists {
            return Ok(None);
        }
        // The protocol's gas for the fork (revm's own system call adds Amsterdam's reservoir).
        let out =
            self.evm.system_call(address, input).map_err(|source| InternalError::SystemCall { address, source })?;
        let output = out.output;
        self.record(&out.state);
        self.evm.commit(out.state);
        Ok(output)
    }
}

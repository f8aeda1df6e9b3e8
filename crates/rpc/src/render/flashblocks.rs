//! The block being built as `FlashblocksPayloadV1` messages (preconf_flashblocks), the
//! format rollup-boost and op-rbuilder publish and Base's RPC nodes follow: index 0 with the
//! block's `base` when it opens, then one `diff` per pre-confirmation with the transactions
//! it added and the block's roots, bloom, gas and hash as pre-confirmed. Rendered on the
//! event renderer thread from the chain's events (never on the builder's), once per event.
//!
//! The state root per pre-confirmation is computed here, not by the builder: each
//! pre-confirmation's change layer is applied to a running trie over the parent block's
//! (`PreconfRoots`), which re-hashes only the paths it touched (docs/flashblocks.md has the
//! cost and the choice).

use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::{keccak256, Address, B256, B64, U256};
use preconf_chain::chain_state::ChainState;
use preconf_chain::changes::StateChanges;
use preconf_chain::store::{trie, StoreSnapshot};
use preconf_chain::types::{BlockData, ExecutedTx};
use preconf_flashblocks::{ExecutionPayloadBaseV1, ExecutionPayloadFlashblockDeltaV1, FlashblocksPayloadV1, Metadata};
use preconf_op::OpSpecId;
use preconf_trie::RunningState;
use serde_json::{json, Value};

use super::to_json;

/// The payload id of a block the node opened on its own clock (no Engine API): the first
/// 8 bytes of keccak256(parent hash ‖ number ‖ timestamp), distinct per block and the same
/// on every node that renders it. A block started by `engine_forkchoiceUpdated` is
/// published under the id that call returned instead (docs/flashblocks.md).
pub fn standalone_payload_id(header: &Header) -> B64 {
    let mut preimage = [0u8; 48];
    preimage[..32].copy_from_slice(header.parent_hash.as_slice());
    preimage[32..40].copy_from_slice(&header.number.to_be_bytes());
    preimage[40..].copy_from_slice(&header.timestamp.to_be_bytes());
    B64::from_slice(&keccak256(preimage)[..8])
}

/// The name a receipt carries in op-rbuilder's metadata: its transaction type's.
fn receipt_kind(ty: u8) -> &'static str {
    match ty {
        0 => "Legacy",
        1 => "Eip2930",
        2 => "Eip1559",
        3 => "Eip4844",
        4 => "Eip7702",
        _ => "Deposit",
    }
}

fn receipt(etx: &ExecutedTx) -> Value {
    let mut fields = serde_json::to_value(&etx.receipt).unwrap_or(Value::Null);
    if let (Some(nonce), Some(m)) = (etx.deposit_nonce, fields.as_object_mut()) {
        // From Canyon a deposit receipt carries its nonce and version 1.
        m.insert("depositNonce".into(), json!(format!("{nonce:#x}")));
        m.insert("depositReceiptVersion".into(), json!("0x1"));
    }
    json!({ receipt_kind(etx.ty()): fields })
}

/// The payload id of a payload that starts block `header` at its pre-confirmation
/// `start`: the block's own id when it starts at the block's opening, else one for "this
/// block again from pre-confirmation `start`" (the same on every node that restarts there).
pub fn payload_id_from(header: &Header, start: u64) -> B64 {
    let id = standalone_payload_id(header);
    if start == 0 {
        return id;
    }
    let mut preimage = [0u8; 16];
    preimage[..8].copy_from_slice(id.as_slice());
    preimage[8..].copy_from_slice(&start.to_be_bytes());
    B64::from_slice(&keccak256(preimage)[..8])
}

/// How many payload ids the stream remembers so as never to publish two payloads under one
/// (a rewound block opened again has the same parent, number and often timestamp).
const REMEMBERED_IDS: usize = 64;

/// Where the stream is in the block being built.
struct Open {
    number: u64,
    payload_id: B64,
    /// The block's pre-confirmation index the payload started at (its message index 0),
    /// and the last one sent: a message's index is the distance between them.
    start: u64,
    last_preconf: u64,
    /// Transactions already sent, and the hash of the last (to tell a block that went
    /// another way, as the test methods can make it, from one that grew).
    sent: usize,
    last_hash: Option<B256>,
    /// The `block_hash` of the last message (zero without state roots).
    last_block_hash: B256,
    /// Index 0 went out.
    begun: bool,
}

/// Where a pre-confirmation stands against what the stream sent.
#[derive(Debug, PartialEq, Eq)]
pub enum Follow {
    /// The next one: sent as the next index.
    Next,
    /// Already sent (a restart took a newer version of the block): nothing to send.
    Covered,
    /// The stream cannot continue with it (it never saw the block start, missed a
    /// pre-confirmation, or the block went another way): the block starts over.
    Break,
}

/// Renders the messages of the block being built. Pure: the state root of each
/// pre-confirmation is given (`PreconfRoots`), or `None` to send zeros.
#[derive(Default)]
pub struct FlashblockStream {
    open: Option<Open>,
    /// Jovian is active for the open block (its diffs carry `blob_gas_used`).
    jovian: bool,
    used: std::collections::VecDeque<B64>,
}

impl FlashblockStream {
    /// Starts a payload of `block` where it is: index 0 with its base and every transaction
    /// so far, `changes` everything the block did so far. For a block that just opened
    /// (pre-confirmation 0) that is its opening (an OP block's L1-info deposit); for one
    /// the stream takes up mid-way (a new leader continuing it, a replica or an endpoint that
    /// joined late, a pre-confirmation missed) it is a new payload of the same block.
    pub fn opened(
        &mut self,
        block: &BlockData,
        changes: &StateChanges,
        state_root: Option<B256>,
        jovian: bool,
    ) -> String {
        let start = block.preconf_index.unwrap_or_default();
        let mut payload_id =
            block.payload_id.filter(|_| start == 0).unwrap_or_else(|| payload_id_from(&block.header, start));
        // Never two payloads under one id: a block opened again after a rewind has the
        // same parent, number and timestamp, but other contents.
        while self.used.contains(&payload_id) {
            payload_id = B64::from_slice(&keccak256(payload_id)[..8]);
        }
        if self.used.len() == REMEMBERED_IDS {
            self.used.pop_front();
        }
        self.used.push_back(payload_id);
        self.jovian = jovian;
        self.open = Some(Open {
            number: block.header.number,
            payload_id,
            start,
            last_preconf: start,
            sent: 0,
            last_hash: None,
            last_block_hash: B256::ZERO,
            begun: false,
        });
        self.render(block, changes, state_root).unwrap_or_default()
    }

    /// Whether `block`, a pre-confirmation, is the next of the payload being sent.
    pub fn follows(&self, block: &BlockData) -> Follow {
        let Some(open) = &self.open else { return Follow::Break };
        if open.number != block.header.number {
            return Follow::Break;
        }
        let preconf = block.preconf_index.unwrap_or(open.last_preconf + 1);
        if preconf <= open.last_preconf {
            return Follow::Covered;
        }
        let grew =
            open.sent <= block.txs.len() && open.last_hash == open.sent.checked_sub(1).map(|i| block.txs[i].hash());
        match preconf == open.last_preconf + 1 && grew {
            true => Follow::Next,
            false => Follow::Break,
        }
    }

    /// A pre-confirmation of the open block: the next index. `None` when it is not the
    /// next (`follows`); on a break the stream closes until a payload starts again.
    pub fn preconfirmed(
        &mut self,
        block: &BlockData,
        changes: &StateChanges,
        state_root: Option<B256>,
    ) -> Option<String> {
        match self.follows(block) {
            Follow::Next => self.render(block, changes, state_root),
            Follow::Covered => None,
            Follow::Break => {
                self.open = None;
                None
            }
        }
    }

    /// The block was sealed. Its header can differ from the last pre-confirmation's by what
    /// the seal alone adds: on an Ethereum chain from Prague the post-block system calls
    /// (EIP-7002/7251 queues) can change state and bring requests (EIP-7685), which change
    /// the state root and the requests hash. Then one more message, with no transactions,
    /// carries the sealed header's roots and hash, so the payload still ends at the sealed
    /// block. Nothing when the last message already names it (every OP block: no such
    /// calls), or without state roots (no hash to compare).
    pub fn sealed(&mut self, block: &BlockData) -> Option<String> {
        let open = self.open.as_ref()?;
        let hash = block.hash?;
        let complete = open.number == block.header.number && open.sent == block.txs.len() && open.begun;
        if !complete || open.last_block_hash.is_zero() || open.last_block_hash == hash {
            return None;
        }
        let mut last = block.clone();
        last.preconf_index = Some(open.last_preconf + 1);
        // `render` hashes the header with the root it is given: the sealed one.
        let root = block.header.state_root;
        self.render(&last, &StateChanges::default(), Some(root))
    }

    /// Whether a block is open on the stream (the roots are worth computing).
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// The block number and pre-confirmation the stream last sent.
    fn position(&self) -> Option<(u64, u64)> {
        self.open.as_ref().map(|o| (o.number, o.last_preconf))
    }

    fn render(&mut self, block: &BlockData, changes: &StateChanges, state_root: Option<B256>) -> Option<String> {
        let open = self.open.as_mut()?;
        let new = &block.txs[open.sent..];
        let h = &block.header;
        let (state_root, block_hash) = match state_root {
            Some(root) => {
                let mut header = h.clone();
                header.state_root = root;
                (root, header.hash_slow())
            }
            None => (B256::ZERO, B256::ZERO),
        };
        // Index 0 is the payload's first message; then the pre-confirmation's distance from
        // the payload's start (the same indices on every node that started it there).
        let index = match open.begun {
            false => 0,
            true => block.preconf_index.unwrap_or(open.last_preconf + 1) - open.start,
        };
        let base = (index == 0).then(|| ExecutionPayloadBaseV1 {
            parent_beacon_block_root: h.parent_beacon_block_root.unwrap_or_default(),
            parent_hash: h.parent_hash,
            fee_recipient: h.beneficiary,
            prev_randao: h.mix_hash,
            block_number: h.number,
            gas_limit: h.gas_limit,
            timestamp: h.timestamp,
            extra_data: h.extra_data.clone(),
            base_fee_per_gas: U256::from(h.base_fee_per_gas.unwrap_or_default()),
        });
        let diff = ExecutionPayloadFlashblockDeltaV1 {
            state_root,
            receipts_root: h.receipts_root,
            logs_bloom: h.logs_bloom,
            gas_used: h.gas_used,
            block_hash,
            transactions: new.iter().map(|t| t.tx.encoded_2718().into()).collect(),
            withdrawals: Vec::new(),
            withdrawals_root: h.withdrawals_root.unwrap_or_default(),
            blob_gas_used: self.jovian.then(|| h.blob_gas_used.unwrap_or_default()),
        };
        let balance = |a: &Address| changes.accounts.get(a).and_then(|c| c.info).map_or(U256::ZERO, |i| i.balance);
        let metadata = Metadata {
            receipts: new.iter().map(|t| (t.hash(), receipt(t))).collect(),
            new_account_balances: changes.accounts.keys().map(|a| (*a, balance(a))).collect(),
            block_number: h.number,
        };
        let message = FlashblocksPayloadV1 { payload_id: open.payload_id, index, base, diff, metadata };
        open.last_preconf = open.start + index;
        open.last_block_hash = block_hash;
        open.begun = true;
        open.sent = block.txs.len();
        open.last_hash = block.txs.last().map(|t| t.hash());
        Some(to_json(&message))
    }
}

/// The state root of each pre-confirmation: its change layer applied to a running trie
/// over the parent block's, so each costs what it changed (and the hashing of those paths
/// up to the root), not the block so far. A trie read that fails leaves the rest of the
/// block without roots (zeros), never a wrong one.
pub struct PreconfRoots {
    chain: Arc<ChainState>,
    open: Option<(u64, Arc<StoreSnapshot>, RunningState)>,
}

impl PreconfRoots {
    pub fn new(chain: Arc<ChainState>) -> Self {
        Self { chain, open: None }
    }

    /// Whether Jovian is active for `block` (the diffs carry its DA footprint).
    pub fn jovian(&self, block: &BlockData) -> bool {
        self.chain.spec().op().is_some_and(|op| op.is_active(OpSpecId::JOVIAN, block.header.timestamp))
    }

    /// `block` opened with `changes` (its system calls and opening transactions).
    pub fn opened(&mut self, block: &BlockData, changes: &StateChanges) -> Option<B256> {
        // The view's store snapshot holds the parent's trie whether or not its commit has
        // landed, and keeps reading it while this block is open.
        let snapshot = self.chain.view().snapshot.clone();
        self.start(block, changes, snapshot)
    }

    /// `block` with `changes` (everything it did so far) over the parent's trie `snapshot` holds.
    fn start(&mut self, block: &BlockData, changes: &StateChanges, snapshot: Arc<StoreSnapshot>) -> Option<B256> {
        self.open = Some((block.header.number, snapshot, RunningState::default()));
        self.apply(block, changes)
    }

    /// The state root after `changes`, the next layer of the open block.
    pub fn apply(&mut self, block: &BlockData, changes: &StateChanges) -> Option<B256> {
        let (number, snapshot, tries) = self.open.as_mut()?;
        if *number != block.header.number {
            self.open = None;
            return None;
        }
        let updates = trie::trie_updates(changes);
        let root = snapshot.trie_reader_at(*number - 1).ok().and_then(|reader| tries.apply(&*reader, &updates).ok());
        if root.is_none() {
            self.open = None;
        }
        root
    }
}

/// The endpoint's renderer: the stream and its state roots, fed the chain's events. A
/// pre-confirmation the stream cannot continue starts the block over (a new payload, index
/// 0) from the version of it the node shows now, so a follower never waits for the next
/// block to see this one: a new leader continuing a block, a replica or endpoint that
/// joined mid-block, a pre-confirmation missed.
pub struct FlashblocksV1 {
    pub stream: FlashblockStream,
    pub roots: PreconfRoots,
}

impl FlashblocksV1 {
    pub fn new(chain: Arc<ChainState>) -> Self {
        Self { stream: FlashblockStream::default(), roots: PreconfRoots::new(chain) }
    }

    /// A block opened (its index 0).
    pub fn opened(&mut self, block: &BlockData, changes: &StateChanges, with_roots: bool) -> String {
        let root = with_roots.then(|| self.roots.opened(block, changes)).flatten();
        self.stream.opened(block, changes, root, self.roots.jovian(block))
    }

    /// A pre-confirmation: the next index, or the block started over, or nothing (already
    /// sent, or the block is no longer the one being built).
    pub fn preconfirmed(&mut self, block: &BlockData, changes: &StateChanges, with_roots: bool) -> Option<String> {
        match self.stream.follows(block) {
            Follow::Next => {
                let root = with_roots.then(|| self.roots.apply(block, changes)).flatten();
                self.stream.preconfirmed(block, changes, root)
            }
            Follow::Covered => None,
            Follow::Break => self.restart(block, with_roots),
        }
    }

    /// The block starts over from the version the node shows now (this renderer runs
    /// behind the builder: that may be newer than `block`; the events in between are then
    /// `Covered`). Nothing when the node has moved past the block: its next `Opened` is
    /// on the way.
    fn restart(&mut self, block: &BlockData, with_roots: bool) -> Option<String> {
        let view = self.roots.chain.view();
        let shown = view.pending.as_ref().filter(|p| {
            p.number() == block.header.number && p.preconf_index() >= block.preconf_index.unwrap_or_default()
        });
        let Some(shown) = shown else {
            self.stream.open = None;
            return None;
        };
        // Already started from this version (an older event broke after a restart).
        if let Some((number, last)) = self.stream.position() {
            if number == shown.number() && last >= shown.preconf_index() {
                return None;
            }
        }
        let mut all = StateChanges::default();
        for layer in shown.overlay.layers() {
            all.extend((**layer).clone());
        }
        let root = with_roots.then(|| self.roots.start(&shown.block, &all, view.snapshot.clone())).flatten();
        Some(self.stream.opened(&shown.block, &all, root, self.roots.jovian(&shown.block)))
    }
}

#[cfg(test)]
#[path = "flashblocks_tests.rs"]
mod tests;

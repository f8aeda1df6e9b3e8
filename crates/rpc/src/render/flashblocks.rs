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

/// Where the stream is in the block being built.
struct Open {
    number: u64,
    payload_id: B64,
    next_index: u64,
    /// Transactions already sent, and the hash of the last (to tell a block that went
    /// another way, as the test methods can make it, from one that grew).
    sent: usize,
    last_hash: Option<B256>,
}

/// Renders the messages of the block being built. Pure: the state root of each
/// pre-confirmation is given (`PreconfRoots`), or `None` to send zeros.
#[derive(Default)]
pub struct FlashblockStream {
    open: Option<Open>,
    /// Jovian is active for the open block (its diffs carry `blob_gas_used`).
    jovian: bool,
}

impl FlashblockStream {
    /// A block opened (pre-confirmation 0): index 0, with its base and the transactions it
    /// opened with (an OP block's L1-info deposit).
    pub fn opened(
        &mut self,
        block: &BlockData,
        changes: &StateChanges,
        state_root: Option<B256>,
        jovian: bool,
    ) -> String {
        let payload_id = standalone_payload_id(&block.header);
        self.jovian = jovian;
        self.open = Some(Open { number: block.header.number, payload_id, next_index: 0, sent: 0, last_hash: None });
        self.render(block, changes, state_root).unwrap_or_default()
    }

    /// A pre-confirmation of the open block: the next index. `None` for a block this
    /// stream did not see open (it started mid-block) or one that went another way than
    /// what was sent (rewound by a test method): its next block starts anew.
    pub fn preconfirmed(
        &mut self,
        block: &BlockData,
        changes: &StateChanges,
        state_root: Option<B256>,
    ) -> Option<String> {
        let open = self.open.as_ref()?;
        let continues = open.number == block.header.number
            && open.sent <= block.txs.len()
            && open.last_hash == open.sent.checked_sub(1).map(|i| block.txs[i].hash());
        if !continues {
            self.open = None;
            return None;
        }
        self.render(block, changes, state_root)
    }

    /// Whether a block is open on the stream (the roots are worth computing).
    pub fn is_open(&self) -> bool {
        self.open.is_some()
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
        let base = (open.next_index == 0).then(|| ExecutionPayloadBaseV1 {
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
        let message =
            FlashblocksPayloadV1 { payload_id: open.payload_id, index: open.next_index, base, diff, metadata };
        open.next_index += 1;
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

#[cfg(test)]
#[path = "flashblocks_tests.rs"]
mod tests;

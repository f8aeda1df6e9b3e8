//! Sealing: the post-block system calls, the roots and the state root, then one published
//! view holding the new head and the next open block. The durable store transaction runs
//! on the committer thread (commit.rs) while the next block is pre-confirmed.

use std::sync::Arc;

use alloy_primitives::B256;

use super::block::{unix_now_ms, OpenBlock};
use super::Builder;
use crate::error::ChainResult;
use crate::events::ChainEvent;
use crate::exec::system;
use crate::store::codec::StoredTx;
use crate::store::{InFlightBlock, StoredBody, StoredReceipts};
use crate::types::BlockData;
use crate::view::ChainView;
use crate::wire::Position;
use crate::wire::{self as codec, Kind};

impl Builder {
    pub(super) fn seal(&mut self) -> ChainResult<()> {
        let started = std::time::Instant::now();
        let spec_id = self.block.spec_id;
        let requests = system::post_block(&mut self.block, spec_id)?;
        let b = &mut self.block;
        let mut header = b.current_header();
        if let Some(requests) = requests {
            header.requests_hash = Some(requests.requests_hash());
        }
        // O(changes × trie depth), over the parent's trie whether or not its commit has
        // landed; the paths were mostly loaded between ticks (crate::warm).
        let (state_root, trie) = b.warm.state_root(&b.changes)?;
        header.state_root = state_root;
        b.seal_fields(&mut header, &trie)?;
        let hash = header.hash_slow();

        let leaves = std::mem::take(&mut b.leaves);
        let stored = b.txs.iter().zip(leaves.txs).map(|(t, raw)| StoredTx { raw, sender: t.sender });
        let body = StoredBody { txs: stored.collect(), ..Default::default() };
        let receipts = StoredReceipts { receipts: leaves.receipts };
        let tx_hashes: Vec<B256> = b.txs.iter().map(|t| t.hash()).collect();
        let changes = Arc::new(std::mem::take(&mut b.changes));
        let txs = std::mem::take(&mut b.txs);
        let tip = Arc::new(InFlightBlock::new(header.clone(), hash, body, receipts, tx_hashes, changes.clone(), trie));
        // Up to `MAX_IN_FLIGHT` blocks wait for the disk; past that the seal waits too.
        if self.committer.full() {
            if let Some(landed) = self.committer.wait() {
                self.land(landed)?;
            }
        }
        // Reads the store as it is now, the blocks not yet durable and this one on top from
        // memory (whether or not their commits have landed by the time a reader looks).
        let mut tips = self.committer.in_flight().to_vec();
        tips.push(tip.clone());
        let snapshot = self.chain.store().snapshot_with_tips(tips)?;

        let head = Arc::new(BlockData { header, hash: Some(hash), txs: txs.into(), ..Default::default() });
        let old = self.chain.view();
        let sealed = ChainView {
            snapshot,
            finalized: head.header.number.saturating_sub(self.chain.config().finality_depth),
            head: head.clone(),
            pending: None,
            codes: old.codes.clone(),
        };
        let context = self.next_context(&sealed.head.header);
        self.block = OpenBlock::open_at(&self.chain, &sealed, context)?;
        self.published = None;
        // One view: readers go from the last pre-confirmation of the sealed block straight
        // to the new head with the next block open, never through a state without either.
        // Driven by the Engine API, nothing is pending until op-node starts the next block.
        let view = if self.sequencing.is_some() { sealed } else { self.with_pending(sealed) };
        // A cluster's leader: the sealed block (and the one opened after it) in the log
        // before it is stored or shown. Fenced: nothing of it is.
        let term = self.term();
        let encode = || {
            let next = view.pending.as_ref().map(|p| (&*p.block, term, unix_now_ms(), p.tick.clone()));
            codec::encode_sealed(&head, &changes, next.as_ref().map(|(b, t, ms, c)| (*b, *t, *ms, &**c)))
        };
        let Ok(seq) = self.record(Kind::Sealed, head.header.number, 0, encode) else { return Ok(()) };
        let position = match (seq, &self.ledger) {
            (Some(seq), Some(l)) => Some(Position { stream: l.stream().to_string(), seq }),
            _ => None,
        };
        self.committer.submit(tip.clone(), position)?;
        self.chain.publish(view);
        // Measured before the announcement, so whoever hears of the seal finds it counted.
        let seal_seconds = started.elapsed().as_secs_f64();
        self.chain.metrics().seal.observe(seal_seconds);
        if crate::log::enabled(crate::log::Level::Debug) {
            let h = &head.header;
            let fields = serde_json::json!({
                "number": h.number, "transactions": head.txs.len(), "gasUsed": h.gas_used,
                "sealMs": (seal_seconds * 1e6).round() / 1e3, "inFlight": self.committer.in_flight().len(),
                "lastCommitMs": (self.chain.metrics().commit.last_seconds() * 1e6).round() / 1e3,
            });
            crate::log::debug("builder", "sealed", fields);
        }
        self.chain.events().send(ChainEvent::Sealed { block: head, changes });
        self.announce_open();
        Ok(())
    }
}

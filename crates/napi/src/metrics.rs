//! The addon's figures for `GET /metrics`, read at scrape time: the builder's tick and seal
//! histograms, pool sizes, the store's size and the work queues per cost class. One node
//! per process, so any event loop's instance reads the same figures.

use napi_derive::napi;
use preconf_chain::metrics::HistogramSnapshot;

use crate::{work, NativeNode};

/// A histogram in Prometheus' terms: cumulative counts per upper bound, plus sum and count
/// (the `+Inf` bucket).
#[napi(object)]
pub struct NativeHistogram {
    pub bounds: Vec<f64>,
    pub cumulative: Vec<f64>,
    pub sum: f64,
    pub count: f64,
}

impl From<HistogramSnapshot> for NativeHistogram {
    fn from(h: HistogramSnapshot) -> Self {
        Self {
            bounds: h.bounds,
            cumulative: h.cumulative.into_iter().map(|c| c as f64).collect(),
            sum: h.sum,
            count: h.count as f64,
        }
    }
}

/// One cost class's work queue (see `work.rs`).
#[napi(object)]
pub struct NativeWorkQueue {
    /// `calls`, `simulate`, `scans`, `submit` or `trace`.
    pub class: String,
    pub threads: u32,
    pub capacity: u32,
    /// Accepted, waiting for a thread.
    pub queued: f64,
    /// Running now.
    pub running: f64,
    pub completed: f64,
    /// Refused with -32005 because the queue was full.
    pub rejected: f64,
}

#[napi(object)]
pub struct NativeMetrics {
    /// Seconds per pre-confirmation tick (execute what the pool offers, publish).
    pub preconf_tick_seconds: NativeHistogram,
    /// Seconds from when a pre-confirmation's tick was due to its publication.
    pub tick_delay_seconds: NativeHistogram,
    /// Seconds per seal on the builder (roots, state root, publish).
    pub seal_seconds: NativeHistogram,
    /// Seconds per durable store commit of one or more sealed blocks (committer thread).
    pub commit_seconds: NativeHistogram,
    /// Sealed blocks per durable commit (above 1 when the disk fell behind the block time).
    pub commit_blocks: NativeHistogram,
    /// Transactions added per pre-confirmation.
    pub preconf_transactions: NativeHistogram,
    /// Executable pooled transactions.
    pub pool_pending: u32,
    /// Pooled transactions behind a nonce gap.
    pub pool_queued: u32,
    /// Bytes of the store file; absent with `--ephemeral`.
    pub store_bytes: Option<f64>,
    /// Bytes of keys and values the store holds (flat on a pruned node; the file is not).
    pub store_live_bytes: f64,
    /// Newest sealed block.
    pub head: f64,
    /// Newest durable block (`safe`): `head` minus the blocks still being committed.
    pub durable_head: f64,
    /// The oldest block whose body, receipts and state are kept (0: an archive).
    pub history_from: f64,
    pub work_queues: Vec<NativeWorkQueue>,
}

#[napi]
impl NativeNode {
    /// The node's figures for a metrics scrape (cheap, but walks the pool's senders).
    #[napi]
    pub fn metrics(&self) -> napi::Result<NativeMetrics> {
        let chain = self.node.chain();
        let view = chain.view();
        let pool = self.node.api().txpool.counts().map_err(|e| napi::Error::from_reason(e.to_string()))?;
        Ok(NativeMetrics {
            preconf_tick_seconds: chain.metrics().preconf_tick.snapshot().into(),
            tick_delay_seconds: chain.metrics().tick_delay.snapshot().into(),
            seal_seconds: chain.metrics().seal.snapshot().into(),
            commit_seconds: chain.metrics().commit.snapshot().into(),
            commit_blocks: chain.metrics().commit_blocks.snapshot().into(),
            preconf_transactions: chain.metrics().preconf_txs.snapshot().into(),
            pool_pending: pool.pending as u32,
            pool_queued: pool.queued as u32,
            store_bytes: chain.store().size_bytes().map(|b| b as f64),
            store_live_bytes: chain.store().live_bytes().map_err(|e| napi::Error::from_reason(e.to_string()))? as f64,
            head: view.head_number() as f64,
            durable_head: view.durable_head() as f64,
            history_from: view.snapshot.history_from() as f64,
            work_queues: work::snapshot()
                .into_iter()
                .map(|q| NativeWorkQueue {
                    class: q.class.to_string(),
                    threads: q.threads as u32,
                    capacity: q.capacity as u32,
                    queued: q.queued as f64,
                    running: q.running as f64,
                    completed: q.completed as f64,
                    rejected: q.rejected as f64,
                })
                .collect(),
        })
    }
}

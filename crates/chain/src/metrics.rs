//! What the chain measures about itself for operators: how long pre-confirmation ticks and
//! seals take, and how many transactions each pre-confirmation carries. Recorded by the
//! builder a few times a second and read at scrape time, so a plain lock is enough.

use parking_lot::Mutex;

/// Upper bounds (seconds) of the pre-confirmation tick histogram: the interval is 200 ms
/// by default and a tick may use three quarters of it.
pub const TICK_SECONDS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0];
/// Upper bounds (seconds) of the seal and commit histograms.
pub const SEAL_SECONDS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];
/// Upper bounds of the blocks-per-commit histogram (at most `MAX_IN_FLIGHT`, 16).
pub const BLOCKS_PER_COMMIT: &[f64] = &[1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0];
/// Upper bounds of the transactions-per-pre-confirmation histogram.
pub const TXS_PER_PRECONF: &[f64] =
    &[0.0, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0];

/// A fixed-bucket histogram (Prometheus semantics: a value lands in the first bucket whose
/// upper bound is at least the value; above every bound it only counts in `+Inf`).
pub struct Histogram {
    bounds: &'static [f64],
    counts: Mutex<Counts>,
}

struct Counts {
    /// Per bucket, not cumulative; one more than `bounds` for values above all of them.
    buckets: Vec<u64>,
    sum: f64,
    count: u64,
    last: f64,
}

/// A copy of a histogram at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramSnapshot {
    pub bounds: Vec<f64>,
    /// Cumulative counts per bound (what Prometheus calls `_bucket{le=...}`).
    pub cumulative: Vec<u64>,
    pub sum: f64,
    pub count: u64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            counts: Mutex::new(Counts { buckets: vec![0; bounds.len() + 1], sum: 0.0, count: 0, last: 0.0 }),
        }
    }

    pub fn observe(&self, value: f64) {
        let i = self.bounds.iter().position(|b| value <= *b).unwrap_or(self.bounds.len());
        let mut c = self.counts.lock();
        c.buckets[i] += 1;
        c.sum += value;
        c.count += 1;
        c.last = value;
    }

    /// The newest value observed (0 before any).
    pub fn last_seconds(&self) -> f64 {
        self.counts.lock().last
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        let c = self.counts.lock();
        let mut running = 0;
        let cumulative = c.buckets[..self.bounds.len()]
            .iter()
            .map(|n| {
                running += n;
                running
            })
            .collect();
        HistogramSnapshot { bounds: self.bounds.to_vec(), cumulative, sum: c.sum, count: c.count }
    }
}

/// The builder's measurements.
pub struct ChainMetrics {
    /// Wall time of one pre-confirmation: executing what the pool offers and publishing.
    pub preconf_tick: Histogram,
    /// How late each pre-confirmation went out: from the moment its tick was due to its
    /// publication (waking, the transactions run at the tick, publishing). The cadence
    /// readers see is the interval plus the difference of two such delays.
    pub tick_delay: Histogram,
    /// Wall time of one seal on the builder: system calls, roots, state root, publishing.
    pub seal: Histogram,
    /// Wall time of one durable store commit (one or more sealed blocks), on the committer thread.
    pub commit: Histogram,
    /// Sealed blocks each commit wrote: above 1 when the disk fell behind the block time.
    pub commit_blocks: Histogram,
    /// Transactions a pre-confirmation added (0 for an empty tick).
    pub preconf_txs: Histogram,
}

impl Default for ChainMetrics {
    fn default() -> Self {
        Self {
            preconf_tick: Histogram::new(TICK_SECONDS),
            tick_delay: Histogram::new(TICK_SECONDS),
            seal: Histogram::new(SEAL_SECONDS),
            commit: Histogram::new(SEAL_SECONDS),
            commit_blocks: Histogram::new(BLOCKS_PER_COMMIT),
            preconf_txs: Histogram::new(TXS_PER_PRECONF),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_land_in_the_first_bucket_that_holds_them() {
        let h = Histogram::new(&[1.0, 5.0]);
        for v in [0.5, 1.0, 3.0, 9.0] {
            h.observe(v);
        }
        let s = h.snapshot();
        assert_eq!(s.cumulative, vec![2, 3]);
        assert_eq!(s.count, 4);
        assert_eq!(s.sum, 13.5);
    }
}

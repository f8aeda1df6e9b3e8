//! What publishing one pre-confirmation costs the builder as the block fills: the time of
//! `PendingBlock::next` (transaction list, hash index, overlay) per tick, over a block of
//! `TICKS` pre-confirmations adding `PER_TICK` transfers each. `npm run bench:interval`
//! reports the node's figures; this isolates the data-structure step (benches/RESULTS.md).
//!
//!   cargo run --release -p preconf-chain --example publish_tick [ticks] [per_tick]

use std::sync::Arc;
use std::time::Instant;

use alloy_consensus::{Header, Receipt, Signed, TxEnvelope, TxLegacy};
use alloy_primitives::{Address, Signature, B256, U256};
use preconf_chain::types::ExecutedTx;
use preconf_chain::view::PendingBlock;

fn transfer(i: u64) -> Arc<ExecutedTx> {
    let tx = TxLegacy { nonce: i, gas_limit: 21_000, ..Default::default() };
    let hash = B256::from(U256::from(i + 1));
    let tx = TxEnvelope::Legacy(Signed::new_unchecked(tx, Signature::test_signature(), hash));
    let receipt = Receipt { status: true.into(), cumulative_gas_used: 21_000 * (i + 1), logs: vec![] };
    Arc::new(ExecutedTx::eth(tx, Address::with_last_byte(1), receipt, 21_000))
}

#[path = "support/changes.rs"]
mod support_changes;
use support_changes::changes;

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let ticks = args.first().copied().unwrap_or(200);
    let per_tick = args.get(1).copied().unwrap_or(8);
    let mut pending = PendingBlock::start(Header::default(), Vec::new(), 0, changes(0, 0));
    let mut spent = Vec::with_capacity(ticks as usize);
    let mut n = 0;
    for t in 1..=ticks {
        let txs: Vec<_> = (n..n + per_tick).map(transfer).collect();
        let layer = changes(n, per_tick);
        let started = Instant::now();
        pending = pending.next(Header::default(), &txs, t, layer);
        spent.push(started.elapsed().as_secs_f64() * 1e6);
        n += per_tick;
    }
    if std::env::var("SLOW").is_ok() {
        spent.iter().enumerate().filter(|(_, s)| **s > 40.0).for_each(|(i, s)| println!("tick {} {s:.0} µs", i + 1));
    }
    let last: Vec<f64> = spent[spent.len() - spent.len().min(20)..].to_vec();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!(
        "ticks {ticks} x {per_tick} txs: first 20 ticks {:.1} µs/tick, last 20 {:.1} µs/tick, all {:.1} µs/tick, max {:.1} µs; overlay layers at the end {}",
        mean(&spent[..spent.len().min(20)]),
        mean(&last),
        mean(&spent),
        spent.iter().cloned().fold(0.0, f64::max),
        pending.overlay.layers().len()
    );
}

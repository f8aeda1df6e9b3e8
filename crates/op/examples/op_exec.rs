//! Execution time of OP blocks on their witnesses: every `block-*.json(.gz)` of a folder
//! (default: the repository's OP Sepolia Holocene blocks) executed `--rounds` times after a
//! warm-up; per block the median wall time, per transaction that divided by its
//! transactions, and the mean over the blocks. Loading and decoding the fixture is left
//! out; decoding the transactions, op-revm, the receipts and the state root are in.
//!
//! `cargo run --release -p preconf-op --example op_exec -- [DIR] [--rounds N]`

use std::path::PathBuf;
use std::time::Instant;

use preconf_op::fixture::{block_files, WitnessFixture};

fn main() {
    let mut dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/op/op-sepolia-holocene"));
    let mut rounds = 20usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => rounds = args.next().and_then(|v| v.parse().ok()).expect("--rounds N"),
            other => dir = PathBuf::from(other),
        }
    }
    let mut per_block = Vec::new();
    let mut per_tx = Vec::new();
    println!("{:<24} {:>4} {:>10} {:>12} {:>10}", "block", "txs", "gas", "µs/block", "µs/tx");
    for path in block_files(&dir).expect("a folder of block-*.json") {
        let fixture = WitnessFixture::load(&path).expect("a witness fixture");
        let first = fixture.execute().expect("the block executes");
        assert_eq!(first.header.hash_slow(), fixture.expected_hash, "{}", path.display());
        let mut times: Vec<f64> = (0..rounds)
            .map(|_| {
                let started = Instant::now();
                std::hint::black_box(fixture.execute().expect("the block executes"));
                started.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let txs = first.txs.len();
        println!(
            "{:<24} {:>4} {:>10} {:>12.0} {:>10.1}",
            first.header.number,
            txs,
            first.header.gas_used,
            median,
            median / txs as f64
        );
        per_block.push(median);
        per_tx.push(median / txs as f64);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!(
        "mean over {} blocks: {:.0} µs per block, {:.1} µs per transaction ({rounds} rounds, median each)",
        per_block.len(),
        mean(&per_block),
        mean(&per_tx)
    );
}

//! What a block's transactions-or-receipts root costs the builder as the block fills: a root
//! after every `per_root` appended items (one pre-confirmation's transactions), over a block
//! of `items`, with values the size of a transfer's receipt. Prints the total and the cost of
//! the last 20 roots (the largest block).
//!
//!   cargo run --release -p preconf-trie --example ordered_roots [items] [per_root] [rounds]

use std::time::Instant;

use alloy_primitives::Bytes;
use preconf_trie::OrderedTrie;

fn main() {
    let arg = |i: usize, default: usize| std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (items, per_root, rounds) = (arg(1, 4000), arg(2, 8), arg(3, 20));
    let values: Vec<Bytes> = (0..items).map(|i| Bytes::from(vec![(i % 251) as u8; 110 + i % 7])).collect();
    let mut best = f64::MAX;
    let mut best_tail = f64::MAX;
    for _ in 0..rounds {
        let mut trie = OrderedTrie::default();
        let start = Instant::now();
        let mut tail = 0.0;
        let roots = items.div_ceil(per_root);
        for (r, chunk) in values.chunks(per_root).enumerate() {
            let t = Instant::now();
            for v in chunk {
                trie.push(v.clone());
            }
            std::hint::black_box(trie.root());
            if r + 20 >= roots {
                tail += t.elapsed().as_secs_f64();
            }
        }
        best = best.min(start.elapsed().as_secs_f64());
        best_tail = best_tail.min(tail / 20.0);
    }
    println!(
        "{items} items, a root every {per_root}: best of {rounds} {:.2} ms for the block, {:.1} µs per root at its end",
        best * 1e3,
        best_tail * 1e6
    );
}

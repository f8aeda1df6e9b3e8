//! What a pending read pays for its copy of the pre-confirmed layers: every eth_call clones
//! its state view (the overlay with it) and drops it at the end. Measured for the layers of
//! a 1 s block after `TICKS` pre-confirmations of `PER_TICK` transfers each (200 ms: 5 ticks,
//! 10 ms: 100 ticks), as the copy is now (one shared allocation) and as it was (the list of
//! layers copied, one count per layer).
//!
//!   cargo run --release -p preconf-chain --example overlay_copy [per_tick]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use preconf_chain::changes::StateChanges;
use preconf_chain::state::Overlay;

#[path = "support/changes.rs"]
mod support_changes;
use support_changes::changes;

/// ns per clone-and-drop of `f`'s copy, over many rounds on this thread.
fn per_copy<T>(rounds: u32, mut f: impl FnMut() -> T) -> f64 {
    let started = Instant::now();
    for _ in 0..rounds {
        black_box(f());
    }
    started.elapsed().as_nanos() as f64 / rounds as f64
}

fn main() {
    let per_tick = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10u64);
    for ticks in [5u64, 100] {
        let mut overlay = Overlay::default();
        for t in 0..ticks {
            overlay = overlay.with(changes(t * per_tick, per_tick));
        }
        let layers: Vec<Arc<StateChanges>> = overlay.layers().to_vec();
        let spans = vec![1u32; layers.len()];
        let now = per_copy(2_000_000, || overlay.clone());
        let was = per_copy(2_000_000, || (layers.clone(), spans.clone()));
        println!(
            "{ticks} ticks x {per_tick} txs: {} layers; copy now {now:.1} ns, as it was {was:.1} ns",
            layers.len()
        );
    }
}

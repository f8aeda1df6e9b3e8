//! What the WebSocket frame check costs per client message (the guard's hot path):
//! `cargo run --release -p preconf-uws-guard --example frames_cost`.

use preconf_uws_guard::frames::FrameChecker;
use std::time::Instant;

fn masked_text(payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0x81];
    let n = payload.len();
    if n < 126 {
        out.push(0x80 | n as u8);
    } else {
        out.push(0x80 | 126);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    }
    let key = [0x11, 0x22, 0x33, 0x44];
    out.extend_from_slice(&key);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i & 3]));
    out
}

fn main() {
    for size in [100usize, 1_000, 16_000] {
        let call = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_call\",\"params\":[{{\"data\":\"0x{}\"}}]}}",
            "ab".repeat(size / 2)
        );
        let frame = masked_text(&call.as_bytes()[..size]);
        let mut checker = FrameChecker::new(5 << 20);
        let rounds = 200_000_000 / size.max(1000);
        let start = Instant::now();
        for _ in 0..rounds {
            checker.push(std::hint::black_box(&frame)).expect("valid");
        }
        let ns = start.elapsed().as_nanos() as f64 / rounds as f64;
        println!("text message of {size} bytes: {ns:.0} ns per message");
    }
}

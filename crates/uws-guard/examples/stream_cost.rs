//! What following a kept-alive HTTP connection costs per request (the guard's hot path):
//! `cargo run --release -p preconf-uws-guard --example stream_cost`.

use preconf_uws_guard::stream::Stream;
use std::time::Instant;

fn main() {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266","latest"]}"#;
    let request = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1:8545\r\nContent-Type: application/json\r\nUser-Agent: loadgen\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = Stream::default();
    let rounds = 2_000_000;
    let start = Instant::now();
    for _ in 0..rounds {
        let read = stream.read(std::hint::black_box(request.as_bytes()));
        assert!(read.pass.is_none());
    }
    let ns = start.elapsed().as_nanos() as f64 / rounds as f64;
    println!("{}-byte POST ({}-byte head): {ns:.0} ns per request", request.len(), request.len() - body.len());
}

use preconf_uws_guard::head::{refusal_request, Refusal};
use preconf_uws_guard::stream::{Read, Stream};

/// What uWS is handed for `bytes` cut every `step` bytes, and the bytes for a WebSocket.
fn run(bytes: &[u8], step: usize) -> (Vec<u8>, Vec<u8>) {
    let mut stream = Stream::default();
    let (mut passed, mut ws) = (Vec::new(), Vec::new());
    for chunk in bytes.chunks(step) {
        let Read { pass, after_upgrade } = stream.read(chunk);
        passed.extend_from_slice(pass.as_deref().unwrap_or(chunk));
        ws.extend(after_upgrade.unwrap_or_default());
    }
    (passed, ws)
}

fn every_cut(bytes: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let whole = run(bytes, bytes.len());
    for step in 1..bytes.len() {
        assert_eq!(run(bytes, step), whole, "cut every {step} bytes");
    }
    whole
}

const POST: &str = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 18\r\n\r\n";

#[test]
fn kept_alive_requests_pass_unchanged_and_a_later_bad_one_is_refused() {
    // The body looks like a head: it is never read as one.
    let body = "GET / HTTP/1.0\r\n\r\n";
    let fine = format!("{POST}{body}GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(every_cut(fine.as_bytes()).0, fine.as_bytes());
    let then_brew = format!("{fine}BREW / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let expected = [fine.as_bytes(), &refusal_request(Refusal::Method, b"BREW")].concat();
    assert_eq!(every_cut(then_brew.as_bytes()).0, expected);
    let then_framing =
        format!("{fine}POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc");
    let expected = [fine.as_bytes(), &refusal_request(Refusal::Framing, b"")].concat();
    assert_eq!(every_cut(then_framing.as_bytes()).0, expected);
}

#[test]
fn http10_later_on_is_rewritten_then_released() {
    let s = "GET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST / HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}BREW";
    let expected = "GET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST / HTTP/1.1\r\nConnection: close\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}BREW";
    assert_eq!(String::from_utf8(every_cut(s.as_bytes()).0).unwrap(), expected);
}

#[test]
fn a_chunked_body_releases_the_connection() {
    let s =
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nBREW\r\n0\r\n\r\nBREW / HTTP/1.1\r\n\r\n";
    assert_eq!(every_cut(s.as_bytes()).0, s.as_bytes());
}

#[test]
fn frames_after_an_upgrade_request_go_to_the_websocket() {
    let head = "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
    let frames = [0x81u8, 0x80, 1, 2, 3, 4];
    let (passed, ws) = run(&[head.as_bytes(), &frames].concat(), 1000);
    assert_eq!(passed, head.as_bytes());
    assert_eq!(ws, frames);
}

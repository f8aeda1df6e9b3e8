use preconf_uws_guard::frames::{FrameChecker, Stop, CLOSE_INVALID_DATA, CLOSE_PROTOCOL_ERROR, CLOSE_TOO_BIG};

/// A client frame (masked unless told otherwise).
fn frame(opcode: u8, payload: &[u8], fin: bool, rsv: u8, masked: bool, length: Option<u64>) -> Vec<u8> {
    let n = length.unwrap_or(payload.len() as u64);
    let mut out = vec![(if fin { 0x80 } else { 0 }) | (rsv << 4) | opcode];
    let m = if masked { 0x80 } else { 0 };
    if n < 126 {
        out.push(m | n as u8);
    } else if n < 65536 {
        out.push(m | 126);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(m | 127);
        out.extend_from_slice(&n.to_be_bytes());
    }
    if !masked {
        out.extend_from_slice(payload);
        return out;
    }
    let key = [0x37, 0xfa, 0x21, 0x3d];
    out.extend_from_slice(&key);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i & 3]));
    out
}

fn text(p: &[u8]) -> Vec<u8> {
    frame(1, p, true, 0, true, None)
}

/// Feeds `bytes` cut every `step` bytes; the violation's code, if any.
fn run(bytes: &[u8], step: usize, max: u64) -> Option<u16> {
    let mut c = FrameChecker::new(max);
    for chunk in bytes.chunks(step) {
        if let Err(Stop { violation, passable }) = c.push(chunk) {
            assert!(passable <= chunk.len());
            return Some(violation.code);
        }
    }
    None
}

fn every_cut(bytes: &[u8], max: u64) -> Option<u16> {
    let whole = run(bytes, bytes.len().max(1), max);
    for step in 1..=bytes.len().min(40) {
        assert_eq!(run(bytes, step, max), whole, "cut every {step} bytes");
    }
    whole
}

#[test]
fn valid_streams_pass_however_cut() {
    let mut s = text("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_chainId\"} €".as_bytes());
    s.extend(frame(9, b"ping", true, 0, true, None));
    s.extend(frame(1, &[0xe2, 0x82], false, 0, true, None));
    s.extend(frame(10, b"", true, 0, true, None)); // a control frame between fragments
    s.extend(frame(0, &[0xac], true, 0, true, None));
    s.extend(frame(2, &vec![0xff; 300], true, 0, true, None));
    s.extend(text(&vec![b'a'; 70_000]));
    assert_eq!(every_cut(&s, 100_000), None);
}

#[test]
fn violations_have_their_codes() {
    let max = 64 * 1024;
    assert_eq!(every_cut(&frame(2, b"", true, 0, true, Some(6 << 20)), max), Some(CLOSE_TOO_BIG));
    let mut fragments = frame(1, &vec![0x20; 40_000], false, 0, true, None);
    fragments.extend(frame(0, &vec![0x20; 40_000], true, 0, true, None));
    assert_eq!(every_cut(&fragments, max), Some(CLOSE_TOO_BIG));
    assert_eq!(every_cut(&frame(1, b"x", true, 4, true, None), max), Some(CLOSE_PROTOCOL_ERROR));
    assert_eq!(every_cut(&frame(3, b"x", true, 0, true, None), max), Some(CLOSE_PROTOCOL_ERROR));
    assert_eq!(every_cut(&frame(1, b"x", true, 0, false, None), max), Some(CLOSE_PROTOCOL_ERROR));
    assert_eq!(every_cut(&frame(0, b"x", true, 0, true, None), max), Some(CLOSE_PROTOCOL_ERROR));
    assert_eq!(every_cut(&frame(9, b"x", false, 0, true, None), max), Some(CLOSE_PROTOCOL_ERROR));
    assert_eq!(every_cut(&text(&[0xff, 0xfe, 0x41]), max), Some(CLOSE_INVALID_DATA));
    // A sequence cut at the message's end is invalid; across fragments it is fine.
    assert_eq!(every_cut(&text(&[0x41, 0xe2, 0x82]), max), Some(CLOSE_INVALID_DATA));
    let mut open = frame(1, &[0xe2], false, 0, true, None);
    open.extend(frame(0, b"", true, 0, true, None));
    assert_eq!(every_cut(&open, max), Some(CLOSE_INVALID_DATA));
    let mut two = frame(1, b"a", false, 0, true, None);
    two.extend(text(b"b"));
    assert_eq!(every_cut(&two, max), Some(CLOSE_PROTOCOL_ERROR));
}

#[test]
fn nothing_that_completes_a_violation_is_passable() {
    // A valid message, then an unmasked frame, in one chunk: the first may go on, the
    // second's header may not.
    let first = text(b"ok");
    let mut s = first.clone();
    s.extend(frame(1, b"x", true, 0, false, None));
    let err = FrameChecker::new(1 << 20).push(&s).unwrap_err();
    assert_eq!(err.passable, first.len());
    // Invalid UTF-8 inside a frame: the frame's end stays back.
    let bad = text(&[0x41, 0xff, 0x41, 0x41]);
    let err = FrameChecker::new(1 << 20).push(&bad).unwrap_err();
    assert!(err.passable < bad.len());
    let close = err.violation.close_frame();
    assert_eq!(&close[..4], &[0x88, close.len() as u8 - 2, 0x03, 0xef]);
}

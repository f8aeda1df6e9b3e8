use preconf_uws_guard::head::{inspect, refusal_request, Head, Next, Refusal, MAX_HEAD};

fn text(h: &Head) -> String {
    match h {
        Head::Rewrite { head: b, .. } | Head::Refuse(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

#[test]
fn http11_with_host_passes_unchanged() {
    let head = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n";
    assert_eq!(inspect(&[&head[..], b"{}"].concat()), Head::Pass { end: head.len(), next: Next::Body(2) });
    assert_eq!(inspect(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET"), Head::Pass { end: 27, next: Next::Body(0) });
    // What the guard cannot be sure uWS reads as it does is released to uWS.
    for odd in [
        "Content-Length: 2 \r\n",
        "Content-Length: +2\r\n",
        "Content-Length: 2\r\nContent-Length: 2\r\n",
        "Transfer-Encoding: chunked\r\n",
    ] {
        let h = format!("POST / HTTP/1.1\r\nHost: x\r\n{odd}\r\n");
        assert!(matches!(inspect(h.as_bytes()), Head::Pass { next: Next::Release, .. }), "{odd}");
    }
}

#[test]
fn waits_for_the_whole_head() {
    assert_eq!(inspect(b"POST / HT"), Head::Incomplete);
    assert_eq!(inspect(b"POST / HTTP/1.1\r\nHost: x\r\n"), Head::Incomplete);
}

#[test]
fn http10_goes_on_as_http11_that_closes() {
    let h = inspect(b"GET /health HTTP/1.0\r\n\r\n");
    assert_eq!(text(&h), "GET /health HTTP/1.1\r\nConnection: close\r\nHost: localhost\r\n\r\n");
    assert!(matches!(h, Head::Rewrite { end: 24, .. }));
    let with_host = inspect(b"POST / HTTP/1.0\r\nhost: a\r\nContent-Length: 2\r\n\r\n{}");
    assert_eq!(text(&with_host), "POST / HTTP/1.1\r\nConnection: close\r\nhost: a\r\nContent-Length: 2\r\n\r\n");
}

#[test]
fn refusals() {
    assert_eq!(inspect(b"BREW / HTTP/1.1\r\nHost: x\r\n\r\n"), Head::Refuse(refusal_request(Refusal::Method, b"BREW")));
    assert!(text(&inspect(b"BREW / HTTP/1.1\r\n")).contains("\r\nMethod: BREW\r\n"));
    assert_eq!(inspect(b"hello\r\n\r\n"), Head::Refuse(refusal_request(Refusal::RequestLine, b"")));
    assert_eq!(inspect(b"GET x HTTP/1.1\r\nHost: x\r\n\r\n"), Head::Refuse(refusal_request(Refusal::RequestLine, b"")));
    assert_eq!(inspect(b"GET / HTTP/2.0\r\nHost: x\r\n\r\n"), Head::Refuse(refusal_request(Refusal::RequestLine, b"")));
    assert_eq!(inspect(b"GET /health HTTP/1.1\r\n\r\n"), Head::Refuse(refusal_request(Refusal::MissingHost, b"")));
    let te = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc";
    assert_eq!(inspect(te), Head::Refuse(refusal_request(Refusal::Framing, b"")));
    assert_eq!(inspect(&vec![b'a'; MAX_HEAD]), Head::Refuse(refusal_request(Refusal::RequestLine, b"")));
}

#[test]
fn upgrade_reports_where_frames_begin() {
    let head = b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\n\r\n";
    let mut with_frames = head.to_vec();
    with_frames.extend_from_slice(&[0x81, 0x80, 1, 2, 3, 4]);
    assert_eq!(inspect(&with_frames), Head::Pass { end: head.len(), next: Next::Upgrade });
}

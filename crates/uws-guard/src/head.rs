//! Request heads, as the bundled uWebSockets.js would mishandle them.
//!
//! Its parser answers only `HTTP/1.1` request lines with one of the verbs it knows and a
//! `Host`; anything else idles until its timeout (HTTP/1.0) or is dropped without a word.
//! [`inspect`] decides on one head: pass it on, pass an HTTP/1.0 request on as HTTP/1.1
//! that closes after its answer, or swap the request for one the node answers with the
//! refusal (see [`Refusal`]). [`Stream`](crate::stream::Stream) finds the heads in a
//! connection's bytes.

/// Longest head read before deciding; a longer one is passed on for uWS's own limits.
pub const MAX_HEAD: usize = 16 * 1024;

/// Verbs uWebSockets.js parses (the rest it drops).
const KNOWN: [&[u8]; 9] = [b"GET", b"POST", b"HEAD", b"OPTIONS", b"PUT", b"DELETE", b"PATCH", b"TRACE", b"CONNECT"];

/// Why a request is refused before uWS sees it; the node answers `GET /.refused/<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A verb uWS does not parse (405 with `Allow`); the verb travels in a `Method` header.
    Method,
    /// Not `METHOD SP /target SP HTTP/1.0|1.1 CRLF` (400).
    RequestLine,
    /// An HTTP/1.1 request without `Host` (RFC 9112 §3.2: 400).
    MissingHost,
    /// `Transfer-Encoding` and `Content-Length` together (RFC 9112 §6.3: 400).
    Framing,
}

impl Refusal {
    /// The path segment the node's route matches (src/transport/http.ts).
    pub const fn name(self) -> &'static str {
        match self {
            Refusal::Method => "method",
            Refusal::RequestLine => "requestLine",
            Refusal::MissingHost => "missingHost",
            Refusal::Framing => "framing",
        }
    }
}

/// What to do with a request head (the bytes from its first one on).
#[derive(Debug, PartialEq, Eq)]
pub enum Head {
    /// Not enough bytes to decide: keep them and wait for more.
    Incomplete,
    /// Pass the head (`end` bytes) on unchanged; what follows it is `next`.
    Pass { end: usize, next: Next },
    /// HTTP/1.0: pass `head` on instead of the first `end` bytes, as HTTP/1.1 that closes
    /// after its answer; what follows passes on unchanged.
    Rewrite { head: Vec<u8>, end: usize },
    /// Pass this request on instead and drop whatever else the connection sends: the node
    /// answers it and closes.
    Refuse(Vec<u8>),
}

/// What follows a head that passes.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// A body of this many bytes (0: the next head).
    Body(u64),
    /// WebSocket frames, once uWS upgraded the connection.
    Upgrade,
    /// Something the guard does not follow (a chunked body, a framing it cannot be sure
    /// uWS reads as it does, a head over MAX_HEAD): the connection is uWS's alone.
    Release,
}

/// The synthetic request that makes the node answer `refusal` and close.
pub fn refusal_request(refusal: Refusal, method: &[u8]) -> Vec<u8> {
    let mut out = format!("GET /.refused/{} HTTP/1.1\r\nHost: -\r\nConnection: close\r\n", refusal.name()).into_bytes();
    if refusal == Refusal::Method {
        out.extend_from_slice(b"Method: ");
        out.extend_from_slice(method);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

struct RequestLine<'a> {
    method: &'a [u8],
    /// Minor version: 0 or 1.
    minor: u8,
    /// Length of the line with its CRLF.
    len: usize,
}

fn request_line(b: &[u8], eol: usize) -> Option<RequestLine<'_>> {
    let line = &b[..eol];
    let sp = line.iter().position(|&c| c == b' ')?;
    let method = &line[..sp];
    if method.is_empty() || !method.iter().all(|&c| is_tchar(c)) {
        return None;
    }
    let rest = &line[sp + 1..];
    let sp2 = rest.iter().position(|&c| c == b' ')?;
    let target = &rest[..sp2];
    if target.first() != Some(&b'/') || !target.iter().all(|&c| c > 32 && c < 127) {
        return None;
    }
    let minor = match &rest[sp2 + 1..] {
        b"HTTP/1.1" => 1,
        b"HTTP/1.0" => 0,
        _ => return None,
    };
    Some(RequestLine { method, minor, len: eol + 2 })
}

/// What the guard needs from the header fields (the lines after the request line).
struct Fields {
    host: bool,
    transfer_encoding: bool,
    /// How many Content-Length fields, and the last one's value if it is plain digits.
    content_lengths: u32,
    content_length: Option<u64>,
    websocket: bool,
}

/// A Content-Length the guard is sure uWS reads the same: 1–15 digits after the colon and
/// optional spaces, nothing after them (uWS does not check the digits it adds up).
fn plain_length(value: &[u8]) -> Option<u64> {
    let start = value.iter().position(|&c| c != b' ')?;
    let digits = value[start..].strip_suffix(b"\r")?;
    if digits.is_empty() || digits.len() > 15 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0u64, |n, &d| n * 10 + (d - b'0') as u64))
}

fn fields(headers: &[u8]) -> Fields {
    let mut f =
        Fields { host: false, transfer_encoding: false, content_lengths: 0, content_length: None, websocket: false };
    for line in headers.split(|&c| c == b'\n') {
        let Some(colon) = line.iter().position(|&c| c == b':') else { continue };
        let name = &line[..colon];
        let value = &line[colon + 1..];
        if name.eq_ignore_ascii_case(b"host") {
            f.host = true;
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            f.transfer_encoding = true;
        } else if name.eq_ignore_ascii_case(b"content-length") {
            f.content_lengths += 1;
            f.content_length = plain_length(value);
        } else if name.eq_ignore_ascii_case(b"upgrade") {
            f.websocket = value.to_ascii_lowercase().windows(9).any(|w| w == b"websocket");
        }
    }
    f
}

/// Decides on a request head: `b` holds the bytes from its start on (all that came so far).
pub fn inspect(b: &[u8]) -> Head {
    let Some(eol) = find(&b[..b.len().min(MAX_HEAD)], b"\r\n") else {
        return if b.len() >= MAX_HEAD {
            Head::Refuse(refusal_request(Refusal::RequestLine, b""))
        } else {
            Head::Incomplete
        };
    };
    let Some(line) = request_line(b, eol) else {
        return Head::Refuse(refusal_request(Refusal::RequestLine, b""));
    };
    if !KNOWN.contains(&line.method) {
        return Head::Refuse(refusal_request(Refusal::Method, line.method));
    }
    // The rest of the head (a blank line ends it; at MAX_HEAD, decide on what there is).
    let end = find(&b[eol..b.len().min(MAX_HEAD)], b"\r\n\r\n").map(|at| eol + at + 4);
    if end.is_none() && b.len() < MAX_HEAD {
        return Head::Incomplete;
    }
    let head_end = end.unwrap_or(b.len());
    let f = fields(&b[line.len..head_end]);
    if line.minor == 1 && !f.host {
        return Head::Refuse(refusal_request(Refusal::MissingHost, b""));
    }
    if f.transfer_encoding && f.content_lengths > 0 {
        return Head::Refuse(refusal_request(Refusal::Framing, b""));
    }
    if line.minor == 0 {
        // As HTTP/1.1 that closes after its answer, as an HTTP/1.0 exchange ends (an
        // HTTP/1.1 status line is a valid answer to an HTTP/1.0 client).
        let mut head = Vec::with_capacity(head_end + 40);
        head.extend_from_slice(&b[..eol - 1]);
        head.extend_from_slice(b"1\r\nConnection: close\r\n");
        if !f.host {
            head.extend_from_slice(b"Host: localhost\r\n");
        }
        head.extend_from_slice(&b[line.len..head_end]);
        return Head::Rewrite { head, end: head_end };
    }
    let next = match (end, f.transfer_encoding, f.content_lengths, f.content_length) {
        (None, ..) | (_, true, ..) => Next::Release,
        _ if f.websocket => Next::Upgrade,
        (_, false, 0, _) => Next::Body(0),
        (_, false, 1, Some(n)) => Next::Body(n),
        _ => Next::Release,
    };
    Head::Pass { end: head_end, next }
}

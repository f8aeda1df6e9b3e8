//! A connection's bytes as the guard follows them: request heads, bodies between them.
//!
//! The guard must never take body bytes for a head. It follows a connection only while it
//! is sure where uWS will look for the next head: after a head with no body or one plain
//! `Content-Length`. Anything else (a chunked body, an upgrade, an HTTP/1.0 request, which
//! closes after its answer, a framing uWS might read otherwise) releases the connection to
//! uWS for good, as does a refusal, after which its bytes are dropped.

use crate::head::{inspect, Head, Next};

/// Where a followed connection is.
#[derive(Debug, PartialEq, Eq)]
pub enum Stream {
    /// At a request's start: the bytes of its head so far, held back from uWS.
    Head(Vec<u8>),
    /// Inside a body with this many bytes left.
    Body(u64),
    /// Refused: whatever else the connection sends is dropped.
    Refused,
    /// No longer followed: uWS's alone.
    Released,
}

impl Default for Stream {
    fn default() -> Self {
        Stream::Head(Vec::new())
    }
}

/// What to hand uWS for one read.
#[derive(Debug, PartialEq, Eq)]
pub struct Read {
    /// None: the read unchanged (the common case, no copy).
    pub pass: Option<Vec<u8>>,
    /// Bytes after a WebSocket upgrade request's head: the WebSocket's once uWS upgraded
    /// the connection (it drops bytes that came with the request).
    pub after_upgrade: Option<Vec<u8>>,
}

/// What goes on to uWS: a prefix of the read while nothing changed, a copy once it did.
struct Out<'a> {
    chunk: &'a [u8],
    upto: usize,
    copy: Option<Vec<u8>>,
}

impl Out<'_> {
    fn keep(&mut self, from: usize, to: usize) {
        match &mut self.copy {
            None if from == self.upto => self.upto = to,
            None => {
                let mut v = self.chunk[..self.upto].to_vec();
                v.extend_from_slice(&self.chunk[from..to]);
                self.copy = Some(v);
            }
            Some(v) => v.extend_from_slice(&self.chunk[from..to]),
        }
    }
    fn put(&mut self, bytes: &[u8]) {
        self.copy.get_or_insert_with(|| self.chunk[..self.upto].to_vec()).extend_from_slice(bytes);
    }
    /// Withholds the rest of the read (a partial head, or a refused connection's bytes).
    fn withhold(&mut self) {
        self.copy.get_or_insert_with(|| self.chunk[..self.upto].to_vec());
    }
    fn done(self) -> Option<Vec<u8>> {
        match self.copy {
            None if self.upto == self.chunk.len() => None,
            None => Some(self.chunk[..self.upto].to_vec()),
            copy => copy,
        }
    }
}

impl Stream {
    /// Reads what the connection sent next.
    pub fn read(&mut self, chunk: &[u8]) -> Read {
        let mut out = Out { chunk, upto: 0, copy: None };
        let mut after_upgrade = None;
        let mut at = 0;
        while at < chunk.len() {
            match self {
                Stream::Released => {
                    out.keep(at, chunk.len());
                    at = chunk.len();
                }
                Stream::Refused => {
                    out.withhold();
                    at = chunk.len();
                }
                Stream::Body(left) => {
                    let take = (*left).min((chunk.len() - at) as u64) as usize;
                    out.keep(at, at + take);
                    at += take;
                    *left -= take as u64;
                    if *left == 0 {
                        *self = Stream::default();
                    }
                }
                Stream::Head(held) => {
                    let had = held.len();
                    if had > 0 {
                        held.extend_from_slice(&chunk[at..]);
                    }
                    let bytes: &[u8] = if had > 0 { held } else { &chunk[at..] };
                    match inspect(bytes) {
                        Head::Incomplete => {
                            if had == 0 {
                                held.extend_from_slice(&chunk[at..]);
                            }
                            out.withhold();
                            at = chunk.len();
                        }
                        Head::Pass { end, next } => {
                            // Held bytes never reached uWS: they go now, as a copy.
                            if had > 0 {
                                out.put(&bytes[..had]);
                            }
                            // `end` reaches past the held bytes: they held no whole head.
                            let head_rest = end.saturating_sub(had);
                            out.keep(at, at + head_rest);
                            at += head_rest;
                            match next {
                                Next::Body(0) => *self = Stream::default(),
                                Next::Body(n) => *self = Stream::Body(n),
                                Next::Release => *self = Stream::Released,
                                Next::Upgrade => {
                                    if at < chunk.len() {
                                        after_upgrade = Some(chunk[at..].to_vec());
                                        out.withhold();
                                    }
                                    *self = Stream::Released;
                                    at = chunk.len();
                                }
                            }
                        }
                        Head::Rewrite { head, end } => {
                            out.put(&head);
                            at += end.saturating_sub(had);
                            *self = Stream::Released;
                        }
                        Head::Refuse(request) => {
                            out.put(&request);
                            *self = Stream::Refused;
                            at = chunk.len();
                        }
                    }
                }
            }
        }
        Read { pass: out.done(), after_upgrade }
    }
}

//! What uWebSockets.js (20.30; 20.57 alike) does not do, done at its socket callbacks.
//!
//! Its HTTP parser never answers HTTP/1.0 (the connection idles until its timeout) and
//! drops, without a word, unknown verbs, malformed request lines, HTTP/1.1 without `Host`
//! and `Transfer-Encoding` with `Content-Length`; its WebSocket parser drops the TCP
//! connection on a protocol error or an oversized message instead of closing with
//! 1002/1007/1009. Both parsers live in the binary. This crate reads the bytes before uWS
//! does: [`head`] decides on each request head, [`stream`] finds the heads in a connection's
//! bytes, [`frames`] checks every client frame, and [`hooks`] seats them in uWS's socket
//! contexts. The answers themselves
//! stay the node's (src/transport/http.ts answers the refusals).

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod frames;
pub mod head;
pub mod hooks;
pub mod stream;

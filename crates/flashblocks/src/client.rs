//! The follower's WebSocket client: connects to a builder's (or Base's proxy's) flashblocks
//! endpoint, decodes every frame (JSON text or brotli binary) and hands it on; a stream
//! silent for longer than `stale_after` is dropped and connected again, as is one that
//! closes or fails, with a backoff that doubles up to `MAX_BACKOFF` and starts over after a
//! frame arrives. Blocking (tungstenite over a `TcpStream` with a read timeout) on a thread
//! of its own: a follower has one connection, and the frames are decoded where they are
//! re-executed, in Rust, without crossing to a JavaScript event loop.

use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tungstenite::client::IntoClientRequest;
use tungstenite::handshake::HandshakeError;
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

use crate::{decode, FlashblocksPayloadV1, MAX_DECODED_BYTES};

/// The longest wait between two connection attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The first wait after a failed connection.
pub const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// How often a blocked read wakes to check whether the client was stopped.
const POLL: Duration = Duration::from_millis(250);

#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// `ws://host:port/path` (plain; a TLS endpoint goes through a local proxy).
    pub url: String,
    /// A stream with no frame for this long is connected again.
    pub stale_after: Duration,
}

/// What the client did, for the node's metrics.
#[derive(Debug, Default)]
pub struct ClientStats {
    /// Frames received and decoded.
    pub frames: AtomicU64,
    /// Frames that did not decode (skipped).
    pub undecodable: AtomicU64,
    /// Connections made after the first.
    pub reconnects: AtomicU64,
    /// Of those, the ones made because the stream had gone silent.
    pub stale: AtomicU64,
    /// 1 while connected.
    pub connected: AtomicU64,
}

#[derive(Debug, thiserror::Error)]
enum Ended {
    #[error("no frame for {0:?}")]
    Stale(Duration),
    #[error("stopped")]
    Stopped,
    #[error("{0}")]
    Broken(String),
}

/// Reads `config.url` until `stop` is set, handing every decoded flashblock to `on_frame`
/// (with the instant its frame was read); `on_frame` returning false stops the client too.
pub fn run(
    config: &ClientConfig,
    stop: &AtomicBool,
    stats: &ClientStats,
    mut on_frame: impl FnMut(FlashblocksPayloadV1, Instant) -> bool,
) {
    let mut backoff = MIN_BACKOFF;
    let mut attempts = 0u64;
    while !stop.load(Ordering::Acquire) {
        if attempts > 0 {
            stats.reconnects.fetch_add(1, Ordering::Relaxed);
        }
        attempts += 1;
        let ended = match connect(&config.url, config.stale_after) {
            Ok(mut socket) => {
                stats.connected.store(1, Ordering::Relaxed);
                let ended = read(&mut socket, config.stale_after, stop, stats, &mut on_frame, &mut backoff);
                stats.connected.store(0, Ordering::Relaxed);
                let _ = socket.close(None);
                ended
            }
            Err(e) => Ended::Broken(e),
        };
        match ended {
            Ended::Stopped => return,
            Ended::Stale(_) => {
                stats.stale.fetch_add(1, Ordering::Relaxed);
            }
            Ended::Broken(_) => {}
        }
        log_reconnect(&config.url, &ended, backoff);
        // Sleep in short steps so that a stop is seen.
        let until = Instant::now() + backoff;
        while Instant::now() < until && !stop.load(Ordering::Acquire) {
            std::thread::sleep(POLL.min(until.saturating_duration_since(Instant::now())));
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

fn log_reconnect(url: &str, why: &Ended, backoff: Duration) {
    eprintln!(
        "{}",
        serde_json::json!({
            "level": "warn", "module": "flashblocks",
            "msg": "flashblocks stream lost; connecting again",
            "url": url, "reason": why.to_string(), "backoff_ms": backoff.as_millis() as u64,
        })
    );
}

fn connect(url: &str, timeout: Duration) -> Result<WebSocket<TcpStream>, String> {
    let request = url.into_client_request().map_err(|e| format!("bad URL {url}: {e}"))?;
    let uri = request.uri();
    if uri.scheme_str() != Some("ws") {
        return Err(format!("only ws:// URLs are followed, got {url}"));
    }
    let host = uri.host().ok_or_else(|| format!("no host in {url}"))?.trim_matches(['[', ']']).to_string();
    let port = uri.port_u16().unwrap_or(80);
    let addrs = (host.as_str(), port).to_socket_addrs().map_err(|e| format!("resolving {host}: {e}"))?;
    let mut last = format!("{host} resolves to no address");
    let mut tcp = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(e) => last = e.to_string(),
        }
    }
    let tcp = tcp.ok_or(last)?;
    tcp.set_nodelay(true).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    tcp.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let config =
        WebSocketConfig::default().max_message_size(Some(MAX_DECODED_BYTES)).max_frame_size(Some(MAX_DECODED_BYTES));
    match tungstenite::client::client_with_config(request, tcp, Some(config)) {
        Ok((socket, _)) => Ok(socket),
        Err(HandshakeError::Interrupted(_)) => Err("the handshake timed out".into()),
        Err(HandshakeError::Failure(e)) => Err(e.to_string()),
    }
}

fn read(
    socket: &mut WebSocket<TcpStream>,
    stale_after: Duration,
    stop: &AtomicBool,
    stats: &ClientStats,
    on_frame: &mut impl FnMut(FlashblocksPayloadV1, Instant) -> bool,
    backoff: &mut Duration,
) -> Ended {
    let _ = socket.get_ref().set_read_timeout(Some(POLL.min(stale_after)));
    let mut last = Instant::now();
    loop {
        if stop.load(Ordering::Acquire) {
            return Ended::Stopped;
        }
        let frame = match socket.read() {
            Ok(Message::Text(text)) => text.as_bytes().to_vec(),
            Ok(Message::Binary(bytes)) => bytes.to_vec(),
            Ok(Message::Close(_)) => return Ended::Broken("the endpoint closed the stream".into()),
            // Pings are answered by tungstenite on the next read; they do not count as data:
            // a builder that pings but sends nothing is still a stalled stream.
            Ok(_) => continue,
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) =>
            {
                if last.elapsed() >= stale_after {
                    return Ended::Stale(stale_after);
                }
                continue;
            }
            Err(e) => return Ended::Broken(e.to_string()),
        };
        let now = Instant::now();
        last = now;
        match decode(&frame) {
            Ok(payload) => {
                stats.frames.fetch_add(1, Ordering::Relaxed);
                *backoff = MIN_BACKOFF;
                if !on_frame(payload, now) {
                    return Ended::Stopped;
                }
            }
            Err(_) => {
                stats.undecodable.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Shared between the client thread and whoever reads its figures.
pub type SharedStats = Arc<ClientStats>;

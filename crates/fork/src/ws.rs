//! JSON-RPC batches over WebSocket (`ws://`, `wss://` upstreams). Each exchange takes a
//! socket nobody is using (or opens one), sends the batch as one text message and reads
//! the next text message as its answer: one request in flight per socket, so answers need
//! no routing, and concurrent requests use up to `MAX_IDLE` sockets kept open between
//! them, as HTTP keep-alive keeps connections. A socket that fails in any way is dropped,
//! and the next exchange opens a new one: that is the reconnect after the upstream closed
//! the connection, restarted or went away for a while. The caller (`Transport`) applies
//! the rate limit and the retries, as for HTTP.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rustls::pki_types::ServerName;
use tungstenite::client::IntoClientRequest;
use tungstenite::handshake::HandshakeError;
use tungstenite::http::{HeaderName, HeaderValue, Uri};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

/// Sockets kept open for later requests: the upstream threads' count (more concurrent
/// requests open sockets of their own, closed after).
const MAX_IDLE: usize = 8;
/// The largest answer taken, as for HTTP (a block's receipts can be large).
const MAX_MESSAGE: usize = 512 << 20;

/// Why an exchange failed; `Transport` maps it to the upstream failure and says whether to retry.
#[derive(Debug)]
pub enum WsError {
    /// No answer (or no connection) within the request's budget.
    Timeout,
    /// The upstream refused the WebSocket handshake with this HTTP status (429, 401, 503…).
    Status(u16),
    /// The connection failed, broke or was closed by the upstream.
    Broken(String),
}

pub struct WsLink {
    request: tungstenite::handshake::client::Request,
    host: String,
    port: u16,
    tls: Option<Arc<rustls::ClientConfig>>,
    timeout: Duration,
    idle: Mutex<Vec<WebSocket<Stream>>>,
}

impl WsLink {
    /// `url` is `ws://` or `wss://`; `headers` go with every handshake (API keys).
    pub fn new(url: &str, headers: &[(String, String)], timeout: Duration) -> Result<Self, String> {
        let uri: Uri = url.parse().map_err(|e| format!("not a URL: {e}"))?;
        let tls = match uri.scheme_str() {
            Some("ws") => None,
            Some("wss") => Some(Arc::new(tls_config())),
            _ => return Err("not a ws:// or wss:// URL".into()),
        };
        let host = uri.host().ok_or("the URL has no host")?.trim_start_matches('[').trim_end_matches(']').to_string();
        let port = uri.port_u16().unwrap_or(if tls.is_some() { 443 } else { 80 });
        let mut request = url.into_client_request().map_err(|e| e.to_string())?;
        for (k, v) in headers {
            let name = HeaderName::from_bytes(k.as_bytes()).map_err(|e| format!("header {k}: {e}"))?;
            let value = HeaderValue::from_str(v).map_err(|e| format!("header {k}: {e}"))?;
            request.headers_mut().append(name, value);
        }
        Ok(Self { request, host, port, tls, timeout, idle: Mutex::new(Vec::new()) })
    }

    /// Sends `body` and returns the upstream's answer, within the request's budget.
    pub fn exchange(&self, body: &str) -> Result<String, WsError> {
        let deadline = Instant::now() + self.timeout;
        let pooled = self.idle.lock().pop();
        let reused = pooled.is_some();
        let mut socket = match pooled {
            Some(socket) => socket,
            None => self.connect(deadline)?,
        };
        let answer = match round_trip(&mut socket, body, deadline) {
            // A kept socket the upstream closed meanwhile (idle timeout, restart) is only
            // found out now: the request never reached it, so it goes once more on a new
            // socket, in the same budget. Every request is a read: sending again is safe.
            Err(WsError::Broken(_)) if reused => {
                socket = self.connect(deadline)?;
                round_trip(&mut socket, body, deadline)
            }
            other => other,
        }?;
        let mut idle = self.idle.lock();
        if idle.len() < MAX_IDLE {
            idle.push(socket);
        }
        Ok(answer)
    }

    fn connect(&self, deadline: Instant) -> Result<WebSocket<Stream>, WsError> {
        let addrs = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| WsError::Broken(format!("resolving {}: {e}", self.host)))?;
        let mut last = WsError::Broken(format!("{} resolves to no address", self.host));
        let mut tcp = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, remaining(deadline)?) {
                Ok(s) => {
                    tcp = Some(s);
                    break;
                }
                Err(e) => last = io_error(e),
            }
        }
        let tcp = tcp.ok_or(last)?;
        tcp.set_nodelay(true).map_err(io_error)?;
        set_timeouts(&tcp, deadline)?;
        let stream = match &self.tls {
            None => Stream::Plain(tcp),
            Some(config) => {
                let name = ServerName::try_from(self.host.clone())
                    .map_err(|e| WsError::Broken(format!("TLS name {}: {e}", self.host)))?;
                let connection = rustls::ClientConnection::new(config.clone(), name)
                    .map_err(|e| WsError::Broken(format!("TLS: {e}")))?;
                Stream::Tls(Box::new(rustls::StreamOwned::new(connection, tcp)))
            }
        };
        let config = WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE)).max_frame_size(Some(MAX_MESSAGE));
        match tungstenite::client::client_with_config(self.request.clone(), stream, Some(config)) {
            Ok((socket, _)) => Ok(socket),
            Err(HandshakeError::Interrupted(_)) => Err(WsError::Timeout),
            Err(HandshakeError::Failure(e)) => Err(ws_error(e)),
        }
    }
}

/// One request and its answer on `socket`.
fn round_trip(socket: &mut WebSocket<Stream>, body: &str, deadline: Instant) -> Result<String, WsError> {
    set_timeouts(socket.get_ref().tcp(), deadline)?;
    socket.send(Message::text(body)).map_err(ws_error)?;
    loop {
        set_timeouts(socket.get_ref().tcp(), deadline)?;
        match socket.read().map_err(ws_error)? {
            Message::Text(text) => return Ok(text.as_str().to_owned()),
            Message::Binary(bytes) => {
                return String::from_utf8(bytes.to_vec())
                    .map_err(|e| WsError::Broken(format!("a binary answer that is not UTF-8: {e}")))
            }
            Message::Close(frame) => {
                let why = frame.map(|f| format!(" ({} {})", f.code, f.reason)).unwrap_or_default();
                return Err(WsError::Broken(format!("the upstream closed the WebSocket{why}")));
            }
            // Pings are answered by tungstenite on the next read or write.
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
        }
    }
}

fn remaining(deadline: Instant) -> Result<Duration, WsError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(WsError::Timeout)
    } else {
        Ok(left)
    }
}

fn set_timeouts(tcp: &TcpStream, deadline: Instant) -> Result<(), WsError> {
    let left = remaining(deadline)?;
    tcp.set_read_timeout(Some(left)).map_err(io_error)?;
    tcp.set_write_timeout(Some(left)).map_err(io_error)
}

fn io_error(e: io::Error) -> WsError {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => WsError::Timeout,
        _ => WsError::Broken(e.to_string()),
    }
}

fn ws_error(e: tungstenite::Error) -> WsError {
    match e {
        tungstenite::Error::Io(e) => io_error(e),
        tungstenite::Error::Http(response) => WsError::Status(response.status().as_u16()),
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
            WsError::Broken("the upstream closed the WebSocket".into())
        }
        other => WsError::Broken(other.to_string()),
    }
}

/// rustls on ring with webpki's roots: what ureq uses for `https://`.
fn tls_config() -> rustls::ClientConfig {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring supports TLS 1.2 and 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth()
}

/// A plain or TLS connection: what the socket reads and writes.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

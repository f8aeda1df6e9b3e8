//! Just enough HTTP/1.1 for the benchmark: pre-built POST requests, keep-alive, and
//! responses framed by Content-Length (what uWebSockets.js and anvil send).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub struct Target {
    pub addr: String,
    host: String,
    path: String,
}

impl Target {
    pub fn parse(url: &str) -> Result<Target, String> {
        let rest = url.strip_prefix("http://").ok_or("only http:// URLs are supported")?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err("URL has no host".into());
        }
        let addr = if authority.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        Ok(Target { addr, host: authority.to_string(), path: path.to_string() })
    }

    /// The full bytes of one POST carrying `body`.
    pub fn request(&self, body: &str) -> Vec<u8> {
        let mut r = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            self.path,
            self.host,
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body.as_bytes());
        r
    }

    pub fn connect(&self) -> io::Result<Conn> {
        let stream = TcpStream::connect(&self.addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Conn { stream, buf: vec![0; 1 << 16], start: 0, end: 0 })
    }
}

pub struct Response {
    pub status: u16,
    /// Where the body lies in `Conn::buf`, valid until the next read.
    body: (usize, usize),
}

pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize, // unread bytes are buf[start..end]
    end: usize,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

impl Conn {
    pub fn send(&mut self, request: &[u8]) -> io::Result<()> {
        self.stream.write_all(request)
    }

    /// Reads more bytes, growing or compacting the buffer when it is full.
    fn fill(&mut self) -> io::Result<()> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                self.buf.resize(self.buf.len() * 2, 0);
            }
        }
        let n = self.stream.read(&mut self.buf[self.end..])?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the connection"));
        }
        self.end += n;
        Ok(())
    }

    /// Reads one response. Its body stays readable through `body()` until the next call.
    pub fn recv(&mut self) -> io::Result<Response> {
        let head_len = loop {
            if let Some(i) = find(&self.buf[self.start..self.end], b"\r\n\r\n") {
                break i + 4;
            }
            self.fill()?;
        };
        let head =
            std::str::from_utf8(&self.buf[self.start..self.start + head_len]).map_err(|_| bad("non-UTF-8 header"))?;
        let status = head.get(9..12).and_then(|s| s.parse::<u16>().ok()).ok_or_else(|| bad("bad status line"))?;
        let mut length = None;
        for line in head.split("\r\n").skip(1) {
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                } else if name.eq_ignore_ascii_case("transfer-encoding") {
                    return Err(bad("chunked responses are not supported"));
                }
            }
        }
        let length = length.ok_or_else(|| bad("response without Content-Length"))?;
        let total = head_len + length;
        if self.start + total > self.buf.len() {
            // Make room for the whole response: move it to the front, then grow if needed.
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if total > self.buf.len() {
                self.buf.resize(total.next_power_of_two(), 0);
            }
        }
        while self.end - self.start < total {
            self.fill()?;
        }
        let body = (self.start + head_len, self.start + total);
        self.start += total;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        Ok(Response { status, body })
    }

    pub fn body(&self, r: &Response) -> &[u8] {
        &self.buf[r.body.0..r.body.1]
    }
}

/// A JSON-RPC success: HTTP 200, a "result" member and no "error" member anywhere
/// (a batch with one failed element counts as an error).
pub fn is_success(status: u16, body: &[u8]) -> bool {
    status == 200 && find(body, b"\"result\"").is_some() && find(body, b"\"error\"").is_none()
}

/// The value of the first `"name":"value"` string member in a JSON text.
pub fn string_field<'a>(body: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let key = format!("\"{name}\":\"");
    let at = find(body, key.as_bytes())? + key.len();
    let len = body[at..].iter().position(|&b| b == b'"')?;
    Some(&body[at..at + len])
}

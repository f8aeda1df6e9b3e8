//! RFC 6455 checks of what a WebSocket client sends, as a stream.
//!
//! The bundled uWebSockets.js drops the TCP connection on a protocol error or an oversized
//! message without the close frame RFC 6455 asks for (clients see 1006), and never answers
//! an unmasked frame. [`FrameChecker`] reads the client's bytes as they arrive, without
//! holding them, and finds the first violation before uWS sees the bytes that complete it,
//! so the connection can be closed with the right status code and a reason.

pub const CLOSE_PROTOCOL_ERROR: u16 = 1002;
pub const CLOSE_INVALID_DATA: u16 = 1007;
pub const CLOSE_TOO_BIG: u16 = 1009;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub code: u16,
    pub reason: String,
}

impl Violation {
    fn protocol(reason: &str) -> Self {
        Violation { code: CLOSE_PROTOCOL_ERROR, reason: reason.to_owned() }
    }

    /// The server's close frame (unmasked): code and reason, at most 123 bytes of it.
    pub fn close_frame(&self) -> Vec<u8> {
        let mut reason = self.reason.as_bytes();
        if reason.len() > 123 {
            let mut cut = 123;
            while !self.reason.is_char_boundary(cut) {
                cut -= 1;
            }
            reason = &reason[..cut];
        }
        let mut out = vec![0x88, 2 + reason.len() as u8];
        out.extend_from_slice(&self.code.to_be_bytes());
        out.extend_from_slice(reason);
        out
    }
}

/// Where a violation was found: the first `passable` bytes of the chunk can go on (they do
/// not complete anything wrong), the rest must not.
#[derive(Debug, PartialEq, Eq)]
pub struct Stop {
    pub passable: usize,
    pub violation: Violation,
}

/// A message open across frames: text (its UTF-8 checked as it comes) or binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Binary,
}

#[derive(Debug)]
struct Frame {
    remaining: u64,
    mask: [u8; 4],
    /// Payload bytes seen so far (the mask's phase).
    seen: u64,
    /// Text payload to validate (a data frame of a text message).
    text: bool,
    /// The last frame of its message.
    fin: bool,
}

/// The client's side of one WebSocket connection.
#[derive(Debug)]
pub struct FrameChecker {
    max_message: u64,
    header: [u8; 14],
    header_len: usize,
    frame: Option<Frame>,
    open: Option<Kind>,
    message_bytes: u64,
    /// The start of a UTF-8 sequence cut at a segment's end.
    carry: Vec<u8>,
    scratch: Vec<u8>,
}

impl FrameChecker {
    pub fn new(max_message: u64) -> Self {
        FrameChecker {
            max_message,
            header: [0; 14],
            header_len: 0,
            frame: None,
            open: None,
            message_bytes: 0,
            carry: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Reads `chunk`; Err names the violation and how much of the chunk may still go on.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), Stop> {
        let mut at = 0;
        // Where the frame whose header is being read began in this chunk (0 if before it).
        let mut header_start = 0;
        while at < chunk.len() {
            if let Some(frame) = &mut self.frame {
                let take = frame.remaining.min((chunk.len() - at) as u64) as usize;
                let segment = &chunk[at..at + take];
                if frame.text {
                    let last = take as u64 == frame.remaining && frame.fin;
                    let (mask, seen) = (frame.mask, frame.seen);
                    if let Err(v) = self.check_text(segment, mask, seen, last) {
                        return Err(Stop { passable: at, violation: v });
                    }
                }
                let frame = self.frame.as_mut().expect("frame present");
                frame.remaining -= take as u64;
                frame.seen += take as u64;
                at += take;
                if frame.remaining == 0 {
                    self.frame = None;
                }
                continue;
            }
            if self.header_len == 0 {
                header_start = at;
            }
            let need = self.header_need();
            let take = (need - self.header_len).min(chunk.len() - at);
            self.header[self.header_len..self.header_len + take].copy_from_slice(&chunk[at..at + take]);
            self.header_len += take;
            at += take;
            if self.header_len < 2 {
                continue;
            }
            // The first two bytes decide most rules; the length may need more.
            if let Err(v) = self.check_start() {
                return Err(Stop { passable: header_start, violation: v });
            }
            let need = self.header_need();
            if self.header_len < need {
                if at == chunk.len() {
                    break;
                }
                continue;
            }
            if let Err(v) = self.begin_frame() {
                return Err(Stop { passable: header_start, violation: v });
            }
        }
        Ok(())
    }

    /// Header bytes this frame needs (2 until the length byte is known).
    fn header_need(&self) -> usize {
        if self.header_len < 2 {
            return 2;
        }
        let len = self.header[1] & 0x7f;
        let extended = match len {
            126 => 2,
            127 => 8,
            _ => 0,
        };
        2 + extended + 4 // + mask key (a client frame without one is refused in check_start)
    }

    fn check_start(&self) -> Result<(), Violation> {
        let (b0, b1) = (self.header[0], self.header[1]);
        let fin = b0 & 0x80 != 0;
        let opcode = b0 & 0x0f;
        if b0 & 0x70 != 0 {
            return Err(Violation::protocol("reserved bits set without a negotiated extension"));
        }
        if opcode > 10 || (opcode > 2 && opcode < 8) {
            return Err(Violation::protocol(&format!("reserved opcode {opcode}")));
        }
        if b1 & 0x80 == 0 {
            return Err(Violation::protocol("client frames must be masked"));
        }
        if opcode >= 8 && (!fin || (b1 & 0x7f) > 125) {
            return Err(Violation::protocol("control frames must be whole and at most 125 bytes"));
        }
        Ok(())
    }

    /// The header is whole: check the frame against the message it belongs to and start it.
    fn begin_frame(&mut self) -> Result<(), Violation> {
        let h = self.header;
        self.header_len = 0;
        let fin = h[0] & 0x80 != 0;
        let opcode = h[0] & 0x0f;
        let (length, key_at) = match h[1] & 0x7f {
            126 => (u16::from_be_bytes([h[2], h[3]]) as u64, 4),
            127 => (u64::from_be_bytes(h[2..10].try_into().expect("8 bytes")), 10),
            n => (n as u64, 2),
        };
        let mask = [h[key_at], h[key_at + 1], h[key_at + 2], h[key_at + 3]];
        let control = opcode >= 8;
        let mut text = false;
        if !control {
            let kind = match (opcode, self.open) {
                (0, None) => return Err(Violation::protocol("continuation frame without a message to continue")),
                (0, Some(kind)) => kind,
                (_, Some(_)) => return Err(Violation::protocol("new message before the previous one ended")),
                (1, None) => Kind::Text,
                _ => Kind::Binary,
            };
            let total = self.message_bytes.saturating_add(length);
            if total > self.max_message {
                return Err(Violation {
                    code: CLOSE_TOO_BIG,
                    reason: format!("message of {total} bytes exceeds the limit of {} bytes", self.max_message),
                });
            }
            self.message_bytes = total;
            text = kind == Kind::Text;
            if fin {
                self.open = None;
                self.message_bytes = 0;
            } else {
                self.open = Some(kind);
            }
            if length == 0 && fin && text && !self.carry.is_empty() {
                self.carry.clear();
                return Err(invalid_utf8());
            }
        }
        if length > 0 {
            self.frame = Some(Frame { remaining: length, mask, seen: 0, text, fin });
        }
        Ok(())
    }

    /// Checks a text payload segment's UTF-8 (with the carry from the last segment).
    fn check_text(&mut self, segment: &[u8], mask: [u8; 4], seen: u64, last: bool) -> Result<(), Violation> {
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.carry);
        let phase = (seen % 4) as usize;
        let key = [mask[phase], mask[(phase + 1) & 3], mask[(phase + 2) & 3], mask[(phase + 3) & 3]];
        let start = self.scratch.len();
        self.scratch.extend_from_slice(segment);
        let mut words = self.scratch[start..].chunks_exact_mut(8);
        let wide = u64::from_ne_bytes([key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3]]);
        for w in &mut words {
            let v = u64::from_ne_bytes((&*w).try_into().expect("8 bytes")) ^ wide;
            w.copy_from_slice(&v.to_ne_bytes());
        }
        for (i, b) in words.into_remainder().iter_mut().enumerate() {
            *b ^= key[i & 3];
        }
        self.carry.clear();
        match std::str::from_utf8(&self.scratch) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_none() && !last => {
                self.carry.extend_from_slice(&self.scratch[e.valid_up_to()..]);
                Ok(())
            }
            Err(_) => Err(invalid_utf8()),
        }
    }
}

fn invalid_utf8() -> Violation {
    Violation { code: CLOSE_INVALID_DATA, reason: "text message is not valid UTF-8".to_owned() }
}

//! Whatever a client sends, cut however: the guard decides without panicking (a panic in a
//! socket callback would be caught and the connection left unguarded, but never should).

use preconf_uws_guard::frames::FrameChecker;
use preconf_uws_guard::stream::Stream;

/// xorshift64*: a seeded stream of bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Pieces that make likely heads and frames, glued with random bytes.
const PIECES: [&[u8]; 14] = [
    b"GET / HTTP/1.1\r\n",
    b"POST / HTTP/1.0\r\n",
    b"BREW /x HTTP/1.1\r\n",
    b"Host: x\r\n",
    b"Content-Length: 5\r\n",
    b"Content-Length: 99999999999\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"Upgrade: websocket\r\n",
    b"\r\n",
    b"\r\n\r\n",
    &[0x81, 0xfe, 0x00, 0x10, 1, 2, 3, 4],
    &[0x82, 0xff, 0, 0, 0, 0, 0, 1, 0, 0, 9, 9, 9, 9],
    &[0x01, 0x83, 0, 0, 0, 0, 0xe2, 0x82, 0xac],
    &[0x89, 0x80, 5, 6, 7, 8],
];

fn input(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.below(40) {
        if rng.below(3) == 0 {
            out.extend((0..rng.below(30)).map(|_| rng.next() as u8));
        } else {
            out.extend_from_slice(PIECES[rng.below(PIECES.len())]);
        }
    }
    out
}

#[test]
fn random_streams_never_panic_and_pass_no_more_than_was_sent_or_synthesised() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let bytes = input(&mut rng);
        let (mut stream, mut frames) = (Stream::default(), FrameChecker::new(1 << 16));
        let mut at = 0;
        while at < bytes.len() {
            let n = 1 + rng.below(bytes.len() - at);
            let chunk = &bytes[at..at + n];
            let read = stream.read(chunk);
            if let Some(pass) = &read.pass {
                assert!(pass.len() <= chunk.len() + 17 * 1024, "bounded by the chunk plus a held head");
            }
            let _ = frames.push(chunk);
            at += n;
        }
    }
}

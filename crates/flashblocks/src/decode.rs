//! A flashblock as it arrives on a WebSocket: JSON text (a builder's own endpoint, and
//! this node's plain one), or the same JSON brotli-compressed in a binary frame (Base's
//! WebSocket proxy). The frame's first byte tells them apart: JSON text starts with `{`
//! (after any whitespace), which no brotli stream this size starts with that a JSON parser
//! would accept anyway, so a failed parse of either is the message's fault.

use std::io::Read;

use crate::FlashblocksPayloadV1;

/// The most a compressed frame may decompress to: a full 60 M gas block of calldata is
/// under 4 MB, so anything past this is refused rather than held (a decompression bomb).
pub const MAX_DECODED_BYTES: usize = 32 << 20;

#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("brotli frame does not decompress: {0}")]
    Brotli(std::io::Error),
    #[error("brotli frame decompresses to more than {MAX_DECODED_BYTES} bytes")]
    TooLarge,
    #[error("not a FlashblocksPayloadV1: {0}")]
    Json(#[from] serde_json::Error),
}

/// Whether `frame` is JSON text rather than a compressed frame.
pub fn is_json(frame: &[u8]) -> bool {
    frame.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Decompresses a brotli frame, up to `MAX_DECODED_BYTES`.
pub fn decompress(frame: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::with_capacity(frame.len() * 6);
    let reader = brotli_decompressor::Decompressor::new(frame, 4096);
    reader.take(MAX_DECODED_BYTES as u64 + 1).read_to_end(&mut out).map_err(DecodeError::Brotli)?;
    if out.len() > MAX_DECODED_BYTES {
        return Err(DecodeError::TooLarge);
    }
    Ok(out)
}

/// One flashblock from a WebSocket frame, plain or brotli-compressed.
pub fn decode(frame: &[u8]) -> Result<FlashblocksPayloadV1, DecodeError> {
    if is_json(frame) {
        return Ok(serde_json::from_slice(frame)?);
    }
    Ok(serde_json::from_slice(&decompress(frame)?)?)
}

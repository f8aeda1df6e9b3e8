//! Flashblocks on the wire: `FlashblocksPayloadV1` as rollup-boost and op-rbuilder publish
//! it and Base's RPC nodes consume it (types.rs), a decoder for the frames a WebSocket
//! carries, plain or brotli-compressed (decode.rs), and the payload put back together from
//! its flashblocks (sequence.rs). No chain here: the node renders its own pre-confirmations
//! into these types (crates/rpc `render/flashblocks.rs`) and a follower re-executes what it
//! decodes.

pub mod client;
mod decode;
mod sequence;
mod types;

pub use decode::{decode, decompress, is_json, DecodeError, MAX_DECODED_BYTES};
pub use sequence::{HeaderShape, Sequence, SequenceError};
pub use types::{ExecutionPayloadBaseV1, ExecutionPayloadFlashblockDeltaV1, FlashblocksPayloadV1, Metadata};

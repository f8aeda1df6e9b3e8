//! Builder events for subscribers (WebSocket streams, eth_sendRawTransactionSync).
//! Payloads are rendered once here, only for the kinds someone listens to.

/// Receives events from the builder thread; implemented by the N-API layer.
pub trait EventSink: Send + Sync {
    /// Bit mask of the event kinds wanted (see [`interest`]).
    fn interest(&self) -> u32;
    fn emit(&self, kind: &str, payload: String);
}

/// Event kinds, as bits of the interest mask (mirrored in src/native.ts).
pub mod interest {
    pub const NEW_HEADS: u32 = 1;
    pub const LOGS: u32 = 2;
    pub const FLASHBLOCKS: u32 = 4;
    pub const FLASHBLOCK_TXS: u32 = 8;
    pub const PENDING_LOGS: u32 = 16;
    pub const PENDING_TXS: u32 = 32;
}

/// A sink that drops everything (no JavaScript listener yet, or Rust tests).
pub struct NoEvents;

impl EventSink for NoEvents {
    fn interest(&self) -> u32 {
        0
    }
    fn emit(&self, _kind: &str, _payload: String) {}
}

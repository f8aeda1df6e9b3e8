//! A forked chain's upstream failed to answer (`--fork-url`): the client sees which
//! upstream and why, as one JSON-RPC error, instead of a hang.

/// The upstream of a forked chain could not give what a request needed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fork upstream {upstream} failed: {failure}")]
pub struct UpstreamError {
    /// The upstream's URL without credentials.
    pub upstream: String,
    pub failure: UpstreamFailure,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamFailure {
    /// No answer within the request timeout (after every retry).
    #[error("no answer within {ms} ms (after {attempts} attempts)")]
    Timeout { ms: u64, attempts: u32 },
    /// The connection failed or broke (after every retry).
    #[error("{reason} (after {attempts} attempts)")]
    Transport { reason: String, attempts: u32 },
    /// HTTP 429 or a JSON-RPC rate-limit error, still after every retry.
    #[error("rate limited (HTTP {status}) after {attempts} attempts")]
    RateLimited { status: u16, attempts: u32 },
    /// Any other HTTP status.
    #[error("HTTP status {status}")]
    Http { status: u16 },
    /// The upstream answered a JSON-RPC error.
    #[error("{method} returned error {code}: {message}")]
    Rpc { method: &'static str, code: i64, message: String },
    /// The answer was not what the method returns.
    #[error("{method} returned an unreadable answer: {reason}")]
    Malformed { method: &'static str, reason: String },
    /// The fork URL's scheme is not one this node speaks.
    #[error("unsupported URL scheme (http://, https://, ws:// and wss:// are supported)")]
    Scheme,
    /// The store's fork is another upstream's, or another block.
    #[error("the datadir holds a fork of {stored} at block {block}; start it with that --fork-url and block, or another datadir")]
    OtherFork { stored: String, block: u64 },
    /// The value is not held yet and this thread does not wait for the upstream
    /// (`fork::without_waiting`): the caller runs the read again where it may wait.
    #[error("the value must be fetched from the upstream, and this thread does not wait for it")]
    WouldWait,
    /// The state before the fork block is the upstream's history, not served here.
    #[error("state before the fork block {fork} is not available on this node (block {block} asked)")]
    BeforeFork { block: u64, fork: u64 },
}

//! Failures as they cross the boundary: a kind (the one list the TypeScript error table
//! is keyed by, generated into native.d.ts), geth's message, and optional data.

use napi::bindgen_prelude::Either;
use napi_derive::napi;
use preconf_chain::error::EngineError;
use preconf_chain::{ChainError, ChainResult, SimulateCode};

/// Declares `ErrorKind`: the kinds listed, then one kind per eth_simulateV1 refusal code
/// (`Sim` + the `SimulateCode` variant, the list the chain crate hands over), and
/// `simulate_kind`, which maps the code to its kind.
macro_rules! error_kinds {
    (kinds: [$($(#[$doc:meta])* $kind:ident,)*] simulate: [$($(#[$code_doc:meta])* $code:ident,)*]) => {
        paste::paste! {
            #[napi(string_enum = "camelCase")]
            #[derive(Debug, PartialEq, Eq)]
            pub enum ErrorKind {
                $($(#[$doc])* $kind,)*
                $([<Sim $code>],)*
            }

            fn simulate_kind(code: SimulateCode) -> ErrorKind {
                match code {
                    $(SimulateCode::$code => ErrorKind::[<Sim $code>],)*
                }
            }
        }
    };
}

preconf_chain::with_simulate_codes!(error_kinds {
    kinds: [
        Config,
        InvalidParams,
        HeaderNotFound,
        Reverted,
        Halted,
        Rejected,
        LimitExceeded,
        /// State the node no longer keeps (proofs older than the trie history).
        Unavailable,
        /// History older than `--history-blocks` (geth's 4444 "pruned history unavailable").
        Pruned,
        /// The store cannot write (disk full, I/O error): transactions are refused for now.
        StoreFault,
        /// The transaction or block a request names does not exist.
        NotFound,
        /// Work stopped at its wall-clock budget (a trace's `timeout`).
        Timeout,
        /// A work queue of the node is full (too many concurrent requests of one kind).
        Overloaded,
        /// A clustered node that does not lead was asked to accept a transaction.
        NotLeader,
        /// A test method could not do what it was asked (anvil answers -32603; not logged).
        TestMethodFailed,
        /// A forked chain's upstream could not answer (`--fork-url`): stalled, refused, rate
        /// limited or gone; the message names it.
        Upstream,
        /// Engine API: getPayload of a payload id the node does not have (-38001).
        UnknownPayload,
        /// Engine API: safe or finalized unknown (-38002).
        InvalidForkchoiceState,
        /// Engine API: payload attributes refused (-38003).
        InvalidPayloadAttributes,
        /// Engine API: more payload bodies asked for than one request may get (-38004).
        TooLargeRequest,
        /// Engine API: the method version does not serve the payload's fork (-38005).
        UnsupportedFork,
        Internal,
    ]
});

#[napi(object)]
pub struct NativeFailure {
    pub kind: ErrorKind,
    pub message: String,
    /// 0x-hex bytes (revert data).
    pub data: Option<String>,
}

/// What every method returns: the result as JSON text, or a typed failure.
pub type Outcome = Either<String, NativeFailure>;

fn kind(e: &ChainError) -> ErrorKind {
    match e {
        ChainError::Config(_) => ErrorKind::Config,
        ChainError::InvalidParams(_) => ErrorKind::InvalidParams,
        ChainError::HeaderNotFound => ErrorKind::HeaderNotFound,
        ChainError::Reverted { .. } => ErrorKind::Reverted,
        ChainError::Halted(_) => ErrorKind::Halted,
        ChainError::Rejected(_) | ChainError::InvalidTx(_) => ErrorKind::Rejected,
        ChainError::LimitExceeded(_) => ErrorKind::LimitExceeded,
        ChainError::Unavailable(_) => ErrorKind::Unavailable,
        ChainError::NotFound(_) => ErrorKind::NotFound,
        ChainError::Pruned { .. } => ErrorKind::Pruned,
        ChainError::StoreFault(_) => ErrorKind::StoreFault,
        ChainError::Timeout { .. } => ErrorKind::Timeout,
        ChainError::TestMethodFailed(_) => ErrorKind::TestMethodFailed,
        ChainError::Upstream(_) => ErrorKind::Upstream,
        ChainError::Internal(_) => ErrorKind::Internal,
        ChainError::NotLeader(_) => ErrorKind::NotLeader,
        ChainError::Simulate(s) => simulate_kind(s.code()),
        ChainError::Engine(e) => match e {
            EngineError::UnknownPayload => ErrorKind::UnknownPayload,
            EngineError::InvalidForkchoiceState(_) => ErrorKind::InvalidForkchoiceState,
            EngineError::InvalidPayloadAttributes(_) => ErrorKind::InvalidPayloadAttributes,
            EngineError::UnsupportedFork(_) => ErrorKind::UnsupportedFork,
            EngineError::TooLargeRequest(_) => ErrorKind::TooLargeRequest,
            EngineError::InvalidParams(_) => ErrorKind::InvalidParams,
            EngineError::NotAnOpChain | EngineError::NotSequencing(_) => ErrorKind::Rejected,
        },
    }
}

pub fn failure(e: ChainError) -> NativeFailure {
    NativeFailure { kind: kind(&e), data: e.data().map(|d| d.to_string()), message: e.to_string() }
}

/// The longest answer handed to JavaScript. V8 strings stop at 2^29 - 24 characters, and
/// converting a longer one fails as an internal error after the work was done; every
/// method has a tighter limit of its own, so this is the net under them.
pub const MAX_RESPONSE_BYTES: usize = 256 << 20;

pub fn outcome(r: ChainResult<String>) -> Outcome {
    match r {
        Ok(json) if json.len() > MAX_RESPONSE_BYTES => Either::B(NativeFailure {
            kind: ErrorKind::LimitExceeded,
            message: format!(
                "response too large: {} bytes, above this node's limit of {MAX_RESPONSE_BYTES} bytes; ask for less",
                json.len()
            ),
            data: None,
        }),
        Ok(json) => Either::A(json),
        Err(e) => Either::B(failure(e)),
    }
}

//! The seam of a forked chain (`--fork-url`): the state the store does not hold comes from
//! an upstream chain as of the fork block. The chain sees the upstream only through
//! [`UpstreamState`]; the client (batching, merging, retries, rate limit, cache) lives in
//! crates/fork. Everything the node writes stays in the store's own tables: the upstream
//! source answers only for what was never written locally.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::{Address, Bytes, B256, U256};

use crate::changes::AccountState;
use crate::error::ChainResult;

/// The block a fork starts from, as the upstream described it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ForkPoint {
    pub chain_id: u64,
    /// The upstream's header of the fork block, verbatim: the node stores it as its first
    /// block, so that its own first block's parent hash is the upstream's block hash.
    pub header: Header,
    pub hash: B256,
    /// The upstream's name as errors show it (its URL without credentials).
    pub upstream: String,
}

/// What `anvil_nodeInfo` shows of an upstream source's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForkSettings {
    /// The URL as given when nothing in it can be a secret, else the upstream's name.
    pub url: String,
    /// `--fork-retry-backoff`, in milliseconds.
    pub retry_backoff_ms: u64,
}

/// What a call, estimate or transaction is about to run, for a guess at what it touches.
#[derive(Clone, Debug, Default)]
pub struct PrefetchCall {
    pub from: Option<Address>,
    pub to: Option<Address>,
    pub value: U256,
    pub input: Bytes,
}

/// The state of the upstream chain at the fork block. Called on the thread that needs the
/// value (the EVM's, or a reader's): an implementation blocks until it has the answer or a
/// typed failure (`ChainError::Upstream`), never longer than its own timeout and retries.
pub trait UpstreamState: Send + Sync {
    /// The upstream's name as errors and the store's fork record show it.
    fn upstream(&self) -> String;
    /// The URL and backoff as `anvil_nodeInfo` shows them.
    fn settings(&self) -> ForkSettings;
    /// The block number asked for (`--fork-block-number`); `None`: the upstream's latest.
    fn configured_block(&self) -> Option<u64>;
    /// Asks the upstream for its chain id and the fork block's header.
    fn fork_point(&self) -> ChainResult<ForkPoint>;
    /// A new source with this one's settings (retries, backoff, timeout, rate limit,
    /// headers, caching) for another fork: `url` (this one's when `None`) at `block` (its
    /// latest when `None`). Not attached: `anvil_reset` with `forking` asks it for its fork
    /// point first, so that a bad URL fails the request and the chain goes on as it was.
    fn refork(&self, url: Option<&str>, block: Option<u64>) -> ChainResult<Arc<dyn UpstreamState>>;
    /// From now on reads are at `point`, and what arrives is kept in `cache`.
    fn attach(&self, point: &ForkPoint, cache: Arc<dyn ForkCache>);
    /// The account at the fork block; `None` when it is empty (no nonce, balance or code).
    fn account(&self, address: &Address) -> ChainResult<Option<AccountState>>;
    fn storage(&self, address: &Address, slot: &U256) -> ChainResult<U256>;
    /// Code by hash, for accounts this source answered for.
    fn code(&self, hash: &B256) -> ChainResult<Option<Bytes>>;
    /// The hash of a block before the fork block (BLOCKHASH).
    fn block_hash(&self, number: u64) -> ChainResult<Option<B256>>;
    /// Fetches, in as few requests as it can, what `call` will probably read. Failures are
    /// not reported: the reads themselves ask again and report.
    fn prefetch(&self, call: &PrefetchCall);
    /// Fetches these accounts and slots in one batch, when not known yet (what every block
    /// touches, read before the first block is built). Failures are not reported.
    fn warm(&self, accounts: &[Address], slots: &[(Address, U256)]);
    /// The upstream's answer to a history request (a block, transaction, receipt or logs
    /// at or before the fork block), as JSON text, verbatim: the upstream's own rendering
    /// keeps what the node's types would drop (another chain's transaction types, its
    /// extra fields). A block, transaction or receipt after the fork block (or not yet in
    /// a block) answers `null`; a list keeps only what is at or before it. Cached when
    /// the answer cannot change (everything up to the fork block is final).
    fn history(&self, method: &'static str, params: serde_json::Value) -> ChainResult<String>;
}

/// Where an upstream source keeps what it fetched: a namespace of the node's store (or of
/// its memory, with `--ephemeral`), never mixed with the chain's own state.
pub trait ForkCache: Send + Sync {
    fn get(&self, key: &[u8]) -> ChainResult<Option<Vec<u8>>>;
    fn put(&self, entries: &[(Vec<u8>, Vec<u8>)]) -> ChainResult<()>;
}

thread_local! {
    /// Set while a read is tried on a JavaScript event loop (`without_waiting`).
    static NO_WAIT: Cell<bool> = const { Cell::new(false) };
}

/// Runs `read` on this thread with waiting for the upstream forbidden: a value the
/// upstream source holds neither in memory nor in its cache (or one another thread is
/// fetching) fails with `UpstreamFailure::WouldWait` instead of being fetched, so that the
/// caller can run the read again on a thread where waiting costs nobody else. An event
/// loop answers every other client of its thread: a slow upstream must not stop it.
pub fn without_waiting<T>(read: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            NO_WAIT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(NO_WAIT.with(|c| c.replace(true)));
    read()
}

/// Whether this thread may wait for the upstream (false inside `without_waiting`).
pub fn may_wait() -> bool {
    !NO_WAIT.with(Cell::get)
}

/// The configured upstream, carried in `ChainConfig`.
#[derive(Clone)]
pub struct ForkSource(pub Arc<dyn UpstreamState>);

impl fmt::Debug for ForkSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ForkSource({})", self.0.upstream())
    }
}

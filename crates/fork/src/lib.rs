//! preconf-fork: a forked chain's upstream (`--fork-url`). The chain asks for state
//! through `preconf_chain::fork::UpstreamState`; this crate answers from memory, the
//! node's store (the cache) or the upstream, in JSON-RPC batches: an account's balance,
//! nonce and code in one request, a call's guessed reads (a prestate trace at the fork
//! block, else `eth_createAccessList` and one batch), identical reads in flight merged, every request under the
//! rate limit, the timeout and the retries (docs/fork.md).

mod history;
mod keys;
mod limit;
mod prestate;
mod resolve;
mod state;
mod transport;
mod values;
mod ws;

use std::collections::HashSet;
use std::sync::Arc;

use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use parking_lot::Mutex;
use preconf_chain::changes::AccountState;
use preconf_chain::error::{ChainResult, UpstreamError};
use preconf_chain::fork::{ForkCache, ForkPoint, ForkSettings, PrefetchCall, UpstreamState};
use serde_json::{json, Value};

use keys::{malformed, read, Answer, Key};
use state::State;
use transport::{shown_url, Call, Transport};
use values::Support;

pub use transport::upstream_name;

/// The fork's settings (anvil's flags).
#[derive(Clone, Debug)]
pub struct ForkOptions {
    pub url: String,
    /// `--fork-block-number`; `None`: the upstream's latest at start.
    pub block: Option<u64>,
    /// `--fork-chain-id`: the chain id without asking the upstream.
    pub chain_id: Option<u64>,
    /// `--fork-retries`: attempts after the first.
    pub retries: u32,
    /// `--fork-retry-backoff`: the wait before the first retry (doubling after).
    pub retry_backoff_ms: u64,
    /// `--compute-units-per-second`; `None`: no limit (`--no-rate-limit`).
    pub compute_units_per_second: Option<u64>,
    /// One request's budget.
    pub timeout_ms: u64,
    /// `--fork-header KEY:VALUE`, sent with every request.
    pub headers: Vec<(String, String)>,
    /// Keep what was fetched in the node's store (off: `--no-storage-caching`).
    pub cache: bool,
}

impl ForkOptions {
    /// anvil's defaults for `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            block: None,
            chain_id: None,
            retries: 5,
            retry_backoff_ms: 1000,
            compute_units_per_second: Some(330),
            timeout_ms: 45_000,
            headers: Vec::new(),
            cache: true,
        }
    }
}

pub struct ForkClient {
    options: ForkOptions,
    state: State,
    history: history::History,
    /// Calls whose reads were prefetched this run (the cache keeps them across runs).
    prefetched: Mutex<HashSet<B256>>,
    /// Whether the upstream answers a `prestateTracer` trace (the guess in one round trip).
    prestate: Mutex<Support>,
}

impl ForkClient {
    pub fn new(options: ForkOptions) -> Result<Self, UpstreamError> {
        let transport = Transport::new(&options)?;
        Ok(Self {
            options,
            state: State::new(transport),
            history: Default::default(),
            prefetched: Default::default(),
            prestate: Mutex::new(Support::Unknown),
        })
    }

    /// HTTP requests sent to the upstream so far (each a batch).
    pub fn requests(&self) -> u64 {
        self.state.transport().requests.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn fail(&self, f: preconf_chain::error::UpstreamFailure) -> preconf_chain::ChainError {
        self.state.transport().error(f).into()
    }
}

impl UpstreamState for ForkClient {
    fn upstream(&self) -> String {
        self.state.transport().name().to_string()
    }

    fn settings(&self) -> ForkSettings {
        ForkSettings { url: shown_url(&self.options.url), retry_backoff_ms: self.options.retry_backoff_ms }
    }

    fn configured_block(&self) -> Option<u64> {
        self.options.block
    }

    fn fork_point(&self) -> ChainResult<ForkPoint> {
        let block = self.options.block.map_or_else(|| "latest".to_string(), |n| format!("{n:#x}"));
        let mut calls = vec![Call::new("eth_getBlockByNumber", json!([block, false]))];
        if self.options.chain_id.is_none() {
            calls.push(Call::new("eth_chainId", json!([])));
        }
        let mut answers = self.state.transport().batch(&calls)?.into_iter();
        let block: Value = answers.next().expect("one per call").map_err(|f| self.fail(f))?;
        let chain_id = match self.options.chain_id {
            Some(id) => id,
            None => {
                let id: U256 = read("eth_chainId", &answers.next().expect("one per call").map_err(|f| self.fail(f))?)
                    .map_err(|f| self.fail(f))?;
                id.try_into().map_err(|e| self.fail(malformed("eth_chainId", e)))?
            }
        };
        if block.is_null() {
            let reason = format!("block {} does not exist upstream", self.options.block.unwrap_or_default());
            return Err(self.fail(malformed("eth_getBlockByNumber", reason)));
        }
        let header: alloy_rpc_types_eth::Header = read("eth_getBlockByNumber", &block).map_err(|f| self.fail(f))?;
        Ok(ForkPoint { chain_id, hash: header.hash, header: header.inner, upstream: self.upstream() })
    }

    fn refork(&self, url: Option<&str>, block: Option<u64>) -> ChainResult<Arc<dyn UpstreamState>> {
        let mut options = self.options.clone();
        if let Some(url) = url {
            options.url = url.to_string();
            // `--fork-chain-id` named the first upstream's chain: another one is asked.
            options.chain_id = None;
        }
        options.block = block;
        Ok(Arc::new(ForkClient::new(options)?))
    }

    fn attach(&self, point: &ForkPoint, cache: Arc<dyn ForkCache>) {
        self.state.attach(point.header.number, self.options.cache.then_some(cache));
        self.history.clear();
    }

    fn account(&self, address: &Address) -> ChainResult<Option<AccountState>> {
        match self.state.get(Key::Account(*address))? {
            Answer::Account(a, _) => Ok(a),
            _ => unreachable!("an account key answers an account"),
        }
    }

    fn storage(&self, address: &Address, slot: &U256) -> ChainResult<U256> {
        match self.state.get(Key::Slot(*address, *slot))? {
            Answer::Slot(v) => Ok(v),
            _ => unreachable!("a slot key answers a slot"),
        }
    }

    fn code(&self, hash: &B256) -> ChainResult<Option<Bytes>> {
        Ok(self.state.code(hash))
    }

    fn block_hash(&self, number: u64) -> ChainResult<Option<B256>> {
        match self.state.get(Key::BlockHash(number))? {
            Answer::BlockHash(h) => Ok(h),
            _ => unreachable!("a block hash key answers a block hash"),
        }
    }

    fn warm(&self, accounts: &[Address], slots: &[(Address, U256)]) {
        self.warm_keys(accounts, slots);
    }

    fn history(&self, method: &'static str, params: Value) -> ChainResult<String> {
        let Some(fork) = self.state.fork_block() else {
            return Err(self.fail(malformed(method, "the fork is not attached yet")));
        };
        Ok(self.history.get(&self.state, fork, method, params)?)
    }

    /// One `debug_traceCall` (`prestateTracer`) at the fork block: what the call touches,
    /// with its values, in one request. Where the upstream refuses it, one
    /// `eth_createAccessList` for the keys, then one batch for all of them not known yet.
    /// Once per distinct call: a repeat (or a restart, through the cache's marker) asks
    /// nothing.
    fn prefetch(&self, call: &PrefetchCall) {
        // A call tried first where it may not wait (its own class's threads) runs on what is
        // held; if it needs more, it runs again where it may wait, and guesses there.
        if !preconf_chain::fork::may_wait() {
            return;
        }
        let id = call_id(call);
        let mut marker = vec![b'p'];
        marker.extend_from_slice(id.as_slice());
        if self.prefetched.lock().contains(&id) || self.state.prefetched(&marker) {
            return;
        }
        let mut keys: Vec<Key> = call.from.iter().chain(call.to.iter()).map(|a| Key::Account(*a)).collect();
        let cold = keys.iter().any(|k| !self.state.known(k));
        let mut request = json!({ "value": call.value, "input": call.input });
        if let Some(from) = call.from {
            request["from"] = json!(from);
        }
        if let Some(to) = call.to {
            request["to"] = json!(to);
        }
        // A warm target whose call was never seen still gets the guess: its slots may be cold.
        // Where the upstream traces, the guess brings the values too: nothing left to fetch.
        let traced = if *self.prestate.lock() == Support::No { Traced::Refused } else { self.trace(&request) };
        match traced {
            Traced::Found(found) => {
                keys.extend(found.iter().map(|(k, _)| *k));
                self.state.absorb(found);
            }
            // The access list names the keys; the batch below fetches them.
            Traced::Refused => {
                let guess = Call::new("eth_createAccessList", json!([request, self.state.block()]));
                match self.state.transport().batch(&[guess]) {
                    Ok(mut answers) => {
                        if let Some(Ok(result)) = answers.pop() {
                            keys.extend(access_list_keys(&result));
                        }
                    }
                    Err(_) if !cold => return,
                    Err(_) => {}
                }
            }
            // The upstream is failing: another guess would only wait on it again.
            Traced::Failed if !cold => return,
            Traced::Failed => {}
        }
        if self.state.resolve(&keys).is_ok() {
            self.prefetched.lock().insert(id);
            self.state.mark_prefetched(marker);
        }
    }
}

impl ForkClient {
    /// The prestate trace of `request` at the fork block, as the keys' answers.
    fn trace(&self, request: &Value) -> Traced {
        let answer = match self.state.transport().batch(&[prestate::call(request, &self.state.block())]) {
            Ok(mut answers) => answers.pop().expect("one answer per call"),
            Err(_) => return Traced::Failed,
        };
        match answer.and_then(|result| prestate::answers(&result)) {
            Ok(found) => {
                *self.prestate.lock() = Support::Yes;
                Traced::Found(found)
            }
            Err(failure) => {
                let mut support = self.prestate.lock();
                // One that traced before keeps being asked: only this call failed.
                if *support == Support::Unknown && prestate::unsupported(&failure) {
                    *support = Support::No;
                }
                Traced::Refused
            }
        }
    }

    fn warm_keys(&self, accounts: &[Address], slots: &[(Address, U256)]) {
        let keys: Vec<Key> =
            accounts.iter().map(|a| Key::Account(*a)).chain(slots.iter().map(|(a, s)| Key::Slot(*a, *s))).collect();
        let _ = self.state.resolve(&keys);
    }
}

/// What a prestate trace gave.
enum Traced {
    Found(Vec<(Key, Answer)>),
    /// Refused or unreadable: the access list guesses instead.
    Refused,
    /// The request failed (after its retries).
    Failed,
}

/// The accounts and slots of an `eth_createAccessList` answer.
fn access_list_keys(result: &Value) -> Vec<Key> {
    let mut keys = Vec::new();
    for item in result["accessList"].as_array().into_iter().flatten() {
        let Ok(address) = Address::deserialize_from(&item["address"]) else { continue };
        keys.push(Key::Account(address));
        for slot in item["storageKeys"].as_array().into_iter().flatten() {
            if let Ok(slot) = B256::deserialize_from(slot) {
                keys.push(Key::Slot(address, U256::from_be_bytes(slot.0)));
            }
        }
    }
    keys
}

trait FromJson: Sized {
    fn deserialize_from(v: &Value) -> Result<Self, serde_json::Error>;
}

impl<T: serde::de::DeserializeOwned> FromJson for T {
    fn deserialize_from(v: &Value) -> Result<Self, serde_json::Error> {
        T::deserialize(v)
    }
}

/// A call's identity for the prefetch marker.
fn call_id(call: &PrefetchCall) -> B256 {
    let mut bytes = Vec::with_capacity(72 + call.input.len());
    bytes.extend_from_slice(call.from.unwrap_or_default().as_slice());
    bytes.extend_from_slice(call.to.unwrap_or_default().as_slice());
    bytes.extend_from_slice(&call.value.to_be_bytes::<32>());
    bytes.extend_from_slice(&call.input);
    keccak256(bytes)
}

//! What the node knows of the upstream's state: everything fetched this run in memory,
//! the cache behind it, and the requests in flight. A key asked for by several threads at
//! once is fetched once: the others wait for its answer (or its failure).

use std::collections::HashMap;
use std::sync::Arc;

use alloy_primitives::{Bytes, B256};
use parking_lot::{Condvar, Mutex, RwLock};
use preconf_chain::error::{UpstreamError, UpstreamFailure};
use preconf_chain::fork::ForkCache;

use crate::keys::{code_key, Answer, Key};
use crate::transport::{Call, Transport};
use crate::values::{self, Support};

type Outcome = Result<Answer, UpstreamError>;
/// The fork block (hex) reads are at, and the cache (absent: `--no-storage-caching`).
type At = Option<(String, Option<Arc<dyn ForkCache>>)>;

#[derive(Default)]
struct Waiter {
    outcome: Mutex<Option<Outcome>>,
    done: Condvar,
}

impl Waiter {
    fn wait(&self) -> Outcome {
        let mut outcome = self.outcome.lock();
        while outcome.is_none() {
            self.done.wait(&mut outcome);
        }
        outcome.clone().expect("set")
    }

    fn finish(&self, outcome: Outcome) {
        *self.outcome.lock() = Some(outcome);
        self.done.notify_all();
    }
}

#[derive(Default)]
struct Memory {
    values: HashMap<Key, Answer>,
    codes: HashMap<B256, Bytes>,
    in_flight: HashMap<Key, Arc<Waiter>>,
}

pub struct State {
    transport: Transport,
    memory: Mutex<Memory>,
    /// Set by `attach`: the fork block (hex) the reads are at, and the cache.
    at: RwLock<At>,
    values: Mutex<Support>,
}

impl State {
    pub fn new(transport: Transport) -> Self {
        Self { transport, memory: Default::default(), at: Default::default(), values: Mutex::new(Support::Unknown) }
    }

    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    pub fn attach(&self, block: u64, cache: Option<Arc<dyn ForkCache>>) {
        *self.memory.lock() = Memory::default();
        *self.at.write() = Some((format!("{block:#x}"), cache));
    }

    pub fn block(&self) -> String {
        self.at.read().as_ref().map(|(b, _)| b.clone()).unwrap_or_else(|| "latest".into())
    }

    /// The fork block, once attached.
    pub fn fork_block(&self) -> Option<u64> {
        let at = self.at.read();
        at.as_ref().and_then(|(b, _)| u64::from_str_radix(b.trim_start_matches("0x"), 16).ok())
    }

    fn cache(&self) -> Option<Arc<dyn ForkCache>> {
        self.at.read().as_ref().and_then(|(_, c)| c.clone())
    }

    pub fn cache_get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.cache()?.get(key).ok()?
    }

    /// Like the state's answers: a failed write costs only a request again.
    pub fn cache_put(&self, entries: Vec<(Vec<u8>, Vec<u8>)>) {
        if let Some(cache) = self.cache() {
            let _ = cache.put(&entries);
        }
    }

    /// The answer for `key`: from memory, the cache, a request in flight, or the upstream.
    /// On a thread that may not wait (`fork::without_waiting`), memory and the cache only.
    pub fn get(&self, key: Key) -> Outcome {
        if !preconf_chain::fork::may_wait() {
            return self.get_held(key);
        }
        loop {
            let waiter = {
                let memory = self.memory.lock();
                if let Some(v) = memory.values.get(&key) {
                    return Ok(v.clone());
                }
                memory.in_flight.get(&key).cloned()
            };
            match waiter {
                Some(w) => return w.wait(),
                None => self.resolve(&[key])?,
            }
        }
    }

    /// The answer for `key` from memory or the cache, or `WouldWait`.
    fn get_held(&self, key: Key) -> Outcome {
        if let Some(v) = self.memory.lock().values.get(&key) {
            return Ok(v.clone());
        }
        match self.cached(&key) {
            Some(answer) => {
                let mut memory = self.memory.lock();
                if let Answer::Account(Some(a), Some(code)) = &answer {
                    memory.codes.insert(a.code_hash, code.clone());
                }
                memory.values.insert(key, answer.clone());
                Ok(answer)
            }
            None => Err(self.transport.error(UpstreamFailure::WouldWait)),
        }
    }

    /// Whether `key` is known without asking the upstream (memory or cache).
    pub fn known(&self, key: &Key) -> bool {
        if self.memory.lock().values.contains_key(key) {
            return true;
        }
        self.cached(key).is_some()
    }

    /// Fetches every key of `keys` nobody holds or fetches yet: the cache first, then the
    /// upstream in one batch (chunked). Keys others are fetching are left to them.
    pub fn resolve(&self, keys: &[Key]) -> Result<(), UpstreamError> {
        let mut owned = Vec::new();
        {
            let mut memory = self.memory.lock();
            for key in keys {
                if memory.values.contains_key(key) || memory.in_flight.contains_key(key) {
                    continue;
                }
                let waiter = Arc::new(Waiter::default());
                memory.in_flight.insert(*key, waiter.clone());
                owned.push((*key, waiter));
            }
        }
        let mut missing = Vec::new();
        for (key, waiter) in owned {
            match self.cached(&key) {
                Some(answer) => self.settle(key, &waiter, Ok(answer)),
                None => missing.push((key, waiter)),
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        self.fetch(missing, false)
    }

    /// Asks the upstream for `missing` in one batch (chunked): each account's three calls,
    /// and the slots in `eth_getStorageValues` calls where the upstream answers them, else
    /// one `eth_getStorageAt` each.
    /// `by_slot`: without `eth_getStorageValues` this time (it just failed).
    fn fetch(&self, missing: Vec<(Key, Arc<Waiter>)>, by_slot: bool) -> Result<(), UpstreamError> {
        let block = self.block();
        let grouped = !by_slot && *self.values.lock() != Support::No;
        let (slots, others): (Vec<_>, Vec<_>) =
            missing.into_iter().partition(|(k, _)| grouped && matches!(k, Key::Slot(..)));
        let per_key: Vec<Vec<Call>> = others.iter().map(|(k, _)| k.calls(&block)).collect();
        let mut calls: Vec<Call> = per_key.iter().flatten().cloned().collect();
        let slot_chunks: Vec<&[(Key, Arc<Waiter>)]> = slots.chunks(values::MAX_SLOTS).collect();
        calls.extend(slot_chunks.iter().map(|chunk| values::call(&slot_pairs(chunk), &block)));
        let answers = match self.transport.batch(&calls) {
            Ok(answers) => answers,
            Err(e) => {
                for (key, waiter) in others.into_iter().chain(slots) {
                    self.settle(key, &waiter, Err(e.clone()));
                }
                return Err(e);
            }
        };
        let mut answers = answers.into_iter();
        let mut fresh = Vec::new();
        let mut first_failure = None;
        for ((key, waiter), calls) in others.into_iter().zip(per_key) {
            // Taken whole before looking at them: the next key's answers follow.
            let taken: Vec<_> = answers.by_ref().take(calls.len()).collect();
            let results: Result<Vec<_>, UpstreamFailure> = taken.into_iter().collect();
            let outcome = results.and_then(|r| key.answer(r)).map_err(|f| self.transport.error(f));
            self.record(key, &waiter, outcome, &mut fresh, &mut first_failure);
        }
        let mut unanswered = Vec::new();
        for chunk in slot_chunks {
            let answer = answers.next().expect("one answer per call");
            match answer.and_then(|v| values::values(&slot_pairs(chunk), &v)) {
                Ok(found) => {
                    *self.values.lock() = Support::Yes;
                    for ((key, waiter), value) in chunk.iter().zip(found) {
                        self.record(*key, waiter, Ok(Answer::Slot(value)), &mut fresh, &mut first_failure);
                    }
                }
                // An upstream without the method: asked again, slot by slot, and never
                // again with it (unless it answered it before: then only this batch).
                Err(UpstreamFailure::Rpc { .. } | UpstreamFailure::Malformed { .. }) => {
                    let mut support = self.values.lock();
                    if *support == Support::Unknown {
                        *support = Support::No;
                    }
                    unanswered.extend(chunk.iter().cloned());
                }
                Err(f) => {
                    let e = self.transport.error(f);
                    for (key, waiter) in chunk {
                        self.record(*key, waiter, Err(e.clone()), &mut fresh, &mut first_failure);
                    }
                }
            }
        }
        self.write_cache(&fresh);
        if !unanswered.is_empty() {
            if let Err(e) = self.fetch(unanswered, true) {
                first_failure.get_or_insert(e);
            }
        }
        first_failure.map_or(Ok(()), Err)
    }

    /// Takes in values the upstream gave at the fork block outside a key's own request (a
    /// prestate trace): each key nobody holds yet goes to memory and the cache. A key in
    /// flight is left to its request (it brings the same value).
    pub fn absorb(&self, found: Vec<(Key, Answer)>) {
        let mut fresh = Vec::with_capacity(found.len());
        {
            let mut memory = self.memory.lock();
            for (key, answer) in found {
                if memory.values.contains_key(&key) || memory.in_flight.contains_key(&key) {
                    continue;
                }
                if let Answer::Account(Some(a), Some(code)) = &answer {
                    memory.codes.insert(a.code_hash, code.clone());
                }
                memory.values.insert(key, answer.clone());
                fresh.push((key, answer));
            }
        }
        self.write_cache(&fresh);
    }

    fn record(
        &self,
        key: Key,
        waiter: &Waiter,
        outcome: Outcome,
        fresh: &mut Vec<(Key, Answer)>,
        first_failure: &mut Option<UpstreamError>,
    ) {
        match &outcome {
            Ok(answer) => fresh.push((key, answer.clone())),
            Err(e) => {
                first_failure.get_or_insert_with(|| e.clone());
            }
        }
        self.settle(key, waiter, outcome);
    }

    /// Hands the outcome to the waiters; an answer stays in memory, a failure does not (the
    /// next read asks again: the upstream may be back).
    fn settle(&self, key: Key, waiter: &Waiter, outcome: Outcome) {
        {
            let mut memory = self.memory.lock();
            if let Ok(answer) = &outcome {
                if let Answer::Account(Some(a), Some(code)) = answer {
                    memory.codes.insert(a.code_hash, code.clone());
                }
                memory.values.insert(key, answer.clone());
            }
            memory.in_flight.remove(&key);
        }
        waiter.finish(outcome);
    }

    fn cached(&self, key: &Key) -> Option<Answer> {
        let bytes = self.cache()?.get(&key.cache_key()).ok()??;
        Answer::decode(key, &bytes)
    }

    /// Written as the answers arrive, in one transaction per batch. A failed write is not
    /// the request's failure: the value is in memory and would only be fetched again.
    fn write_cache(&self, fresh: &[(Key, Answer)]) {
        let Some(cache) = self.cache() else { return };
        let mut entries = Vec::with_capacity(fresh.len());
        for (key, answer) in fresh {
            entries.push((key.cache_key(), answer.encode()));
            if let Answer::Account(Some(a), Some(code)) = answer {
                entries.push((code_key(&a.code_hash), code.to_vec()));
            }
        }
        if entries.is_empty() {
            return;
        }
        if let Err(e) = cache.put(&entries) {
            preconf_chain::log::warn(
                "fork",
                "could not cache upstream state",
                serde_json::json!({ "error": e.to_string() }),
            );
        }
    }

    pub fn code(&self, hash: &B256) -> Option<Bytes> {
        if let Some(code) = self.memory.lock().codes.get(hash) {
            return Some(code.clone());
        }
        let code = Bytes::from(self.cache()?.get(&code_key(hash)).ok()??);
        self.memory.lock().codes.insert(*hash, code.clone());
        Some(code)
    }

    /// Marks (in memory and cache) a call whose touched state was prefetched.
    pub fn prefetched(&self, marker: &[u8]) -> bool {
        self.cache().and_then(|c| c.get(marker).ok().flatten()).is_some()
    }

    pub fn mark_prefetched(&self, marker: Vec<u8>) {
        if let Some(cache) = self.cache() {
            let _ = cache.put(&[(marker, Vec::new())]);
        }
    }
}

/// The (address, slot) pairs of slot keys.
fn slot_pairs(keys: &[(Key, Arc<Waiter>)]) -> Vec<(alloy_primitives::Address, alloy_primitives::U256)> {
    keys.iter()
        .filter_map(|(k, _)| match k {
            Key::Slot(a, s) => Some((*a, *s)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::Address;
    use preconf_chain::fork::{may_wait, without_waiting};
    use std::sync::atomic::Ordering::Relaxed;

    /// An event loop's try: what is not held fails at once with `WouldWait`, and nothing is
    /// sent to the upstream (here one that would refuse the connection).
    #[test]
    fn a_thread_that_may_not_wait_never_asks_the_upstream() {
        let mut options = crate::ForkOptions::new("http://127.0.0.1:9");
        options.retries = 0;
        let state = State::new(Transport::new(&options).unwrap());
        state.attach(5, None);
        let key = Key::Account(Address::with_last_byte(1));
        let e = without_waiting(|| state.get(key)).unwrap_err();
        assert_eq!(e.failure, UpstreamFailure::WouldWait);
        assert_eq!(state.transport().requests.load(Relaxed), 0);
        assert!(may_wait(), "the thread may wait again after the try");
        state.memory.lock().values.insert(key, Answer::Account(None, None));
        assert_eq!(without_waiting(|| state.get(key)), Ok(Answer::Account(None, None)));
    }
}

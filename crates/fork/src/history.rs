//! The upstream's history at or before the fork block (blocks, transactions, receipts,
//! logs), asked for as the client asked and answered verbatim. Everything up to the fork
//! block is final, so an answer is kept for good: in the cache beside the state (a restart
//! asks again for none of it) and, for the run, in a bounded map in memory. An answer
//! after the fork block is not this chain's history: it becomes `null` (or is left out of
//! a list) before it is kept.

use std::collections::HashMap;

use alloy_primitives::{keccak256, B256};
use parking_lot::Mutex;
use preconf_chain::error::{UpstreamError, UpstreamFailure};
use serde_json::Value;

use crate::state::State;
use crate::transport::Call;

/// Answers kept in memory before the map starts over (blocks with full transactions can
/// be large; the cache keeps them all).
const MEMORY_ENTRIES: usize = 1024;

#[derive(Default)]
pub struct History {
    memory: Mutex<HashMap<B256, String>>,
}

impl History {
    pub fn clear(&self) {
        self.memory.lock().clear();
    }

    /// `method(params)` at the upstream, its answer cut at `fork` (the fork block).
    pub fn get(&self, state: &State, fork: u64, method: &'static str, params: Value) -> Result<String, UpstreamError> {
        let id = keccak256(format!("{method}{params}"));
        if let Some(text) = self.memory.lock().get(&id) {
            return Ok(text.clone());
        }
        let key = cache_key(&id);
        if let Some(text) = state.cache_get(&key).and_then(|v| String::from_utf8(v).ok()) {
            self.remember(id, &text);
            return Ok(text);
        }
        if !preconf_chain::fork::may_wait() {
            return Err(state.transport().error(UpstreamFailure::WouldWait));
        }
        let mut answers = state.transport().batch(&[Call::new(method, params)])?;
        let answer = answers.pop().expect("one answer per call").map_err(|f| state.transport().error(f))?;
        let text = at_or_before(answer, fork).to_string();
        state.cache_put(vec![(key, text.clone().into_bytes())]);
        self.remember(id, &text);
        Ok(text)
    }

    fn remember(&self, id: B256, text: &str) {
        let mut memory = self.memory.lock();
        if memory.len() >= MEMORY_ENTRIES {
            memory.clear();
        }
        memory.insert(id, text.to_string());
    }
}

fn cache_key(id: &B256) -> Vec<u8> {
    let mut k = vec![b'r'];
    k.extend_from_slice(id.as_slice());
    k
}

/// The block an answer belongs to: a transaction's, receipt's or log's `blockNumber`
/// (`null` for a transaction still pooled), a block's `number`; `None` for another shape.
fn block_of(v: &Value) -> Option<Option<u64>> {
    let field = v.get("blockNumber").or_else(|| v.get("number"))?;
    Some(field.as_str().and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok()))
}

/// `answer` without what lies after the fork block.
pub fn at_or_before(answer: Value, fork: u64) -> Value {
    let before = |v: &Value| match block_of(v) {
        Some(Some(n)) => n <= fork,
        Some(None) => false,
        None => true,
    };
    match answer {
        Value::Array(items) => Value::Array(items.into_iter().filter(before).collect()),
        v if before(&v) => v,
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_lies_after_the_fork_block_is_not_this_chains_history() {
        assert_eq!(
            at_or_before(json!({ "number": "0x5", "hash": "0x1" }), 5),
            json!({ "number": "0x5", "hash": "0x1" })
        );
        assert_eq!(at_or_before(json!({ "number": "0x6" }), 5), Value::Null);
        assert_eq!(at_or_before(json!({ "hash": "0x2", "blockNumber": null }), 5), Value::Null);
        let logs = json!([{ "blockNumber": "0x4" }, { "blockNumber": "0x9" }]);
        assert_eq!(at_or_before(logs, 5), json!([{ "blockNumber": "0x4" }]));
        assert_eq!(at_or_before(json!("0x3"), 5), json!("0x3"));
        assert_eq!(at_or_before(Value::Null, 5), Value::Null);
    }
}

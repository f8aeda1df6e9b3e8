//! What the node asks the upstream for: the keys, the JSON-RPC calls that answer them,
//! and their encodings in the cache.

use alloy_primitives::{keccak256, Address, Bytes, B256, KECCAK256_EMPTY, U256};
use preconf_chain::changes::AccountState;
use preconf_chain::error::UpstreamFailure;
use serde_json::{json, Value};

use crate::transport::Call;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    Account(Address),
    Slot(Address, U256),
    BlockHash(u64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// `None`: empty at the fork block. The code comes with it (hash, bytes).
    Account(Option<AccountState>, Option<Bytes>),
    Slot(U256),
    BlockHash(Option<B256>),
}

impl Key {
    /// The calls that answer this key at `block` (a hex number).
    pub fn calls(&self, block: &str) -> Vec<Call> {
        match self {
            Key::Account(a) => vec![
                Call::new("eth_getBalance", json!([a, block])),
                Call::new("eth_getTransactionCount", json!([a, block])),
                Call::new("eth_getCode", json!([a, block])),
            ],
            Key::Slot(a, s) => vec![Call::new("eth_getStorageAt", json!([a, B256::from(*s), block]))],
            Key::BlockHash(n) => vec![Call::new("eth_getBlockByNumber", json!([format!("{n:#x}"), false]))],
        }
    }

    /// The answer from the calls' results, in the order `calls` gave them.
    pub fn answer(&self, results: Vec<Value>) -> Result<Answer, UpstreamFailure> {
        match self {
            Key::Account(_) => {
                let balance: U256 = read("eth_getBalance", &results[0])?;
                let nonce: U256 = read("eth_getTransactionCount", &results[1])?;
                let code: Bytes = read("eth_getCode", &results[2])?;
                let nonce = u64::try_from(nonce).map_err(|e| malformed("eth_getTransactionCount", e))?;
                if nonce == 0 && balance.is_zero() && code.is_empty() {
                    return Ok(Answer::Account(None, None));
                }
                let code_hash = if code.is_empty() { KECCAK256_EMPTY } else { keccak256(&code) };
                let code = (!code.is_empty()).then_some(code);
                Ok(Answer::Account(Some(AccountState { nonce, balance, code_hash }), code))
            }
            Key::Slot(..) => Ok(Answer::Slot(U256::from_be_bytes(read::<B256>("eth_getStorageAt", &results[0])?.0))),
            Key::BlockHash(_) => Ok(Answer::BlockHash(match &results[0] {
                Value::Null => None,
                block => Some(read("eth_getBlockByNumber", &block["hash"])?),
            })),
        }
    }

    /// The key in the cache table.
    pub fn cache_key(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(53);
        match self {
            Key::Account(a) => {
                k.push(b'a');
                k.extend_from_slice(a.as_slice());
            }
            Key::Slot(a, s) => {
                k.push(b's');
                k.extend_from_slice(a.as_slice());
                k.extend_from_slice(&s.to_be_bytes::<32>());
            }
            Key::BlockHash(n) => {
                k.push(b'h');
                k.extend_from_slice(&n.to_be_bytes());
            }
        }
        k
    }
}

impl Answer {
    /// The value in the cache table (an account's code is kept apart, by hash).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Answer::Account(None, _) | Answer::BlockHash(None) => Vec::new(),
            Answer::Account(Some(a), _) => {
                let mut v = Vec::with_capacity(72);
                v.extend_from_slice(&a.nonce.to_be_bytes());
                v.extend_from_slice(&a.balance.to_be_bytes::<32>());
                v.extend_from_slice(a.code_hash.as_slice());
                v
            }
            Answer::Slot(value) => value.to_be_bytes::<32>().to_vec(),
            Answer::BlockHash(Some(h)) => h.to_vec(),
        }
    }

    pub fn decode(key: &Key, v: &[u8]) -> Option<Answer> {
        Some(match key {
            Key::Account(_) if v.is_empty() => Answer::Account(None, None),
            Key::Account(_) if v.len() == 72 => Answer::Account(
                Some(AccountState {
                    nonce: u64::from_be_bytes(v[..8].try_into().ok()?),
                    balance: U256::from_be_slice(&v[8..40]),
                    code_hash: B256::from_slice(&v[40..72]),
                }),
                None,
            ),
            Key::Slot(..) if v.len() == 32 => Answer::Slot(U256::from_be_slice(v)),
            Key::BlockHash(_) if v.is_empty() => Answer::BlockHash(None),
            Key::BlockHash(_) if v.len() == 32 => Answer::BlockHash(Some(B256::from_slice(v))),
            _ => return None,
        })
    }
}

/// Code by hash in the cache table.
pub fn code_key(hash: &B256) -> Vec<u8> {
    let mut k = vec![b'c'];
    k.extend_from_slice(hash.as_slice());
    k
}

pub fn read<T: serde::de::DeserializeOwned>(method: &'static str, v: &Value) -> Result<T, UpstreamFailure> {
    T::deserialize(v).map_err(|e| malformed(method, e))
}

pub fn malformed(method: &'static str, e: impl std::fmt::Display) -> UpstreamFailure {
    UpstreamFailure::Malformed { method, reason: e.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip_through_the_cache() {
        let account = Key::Account(Address::with_last_byte(1));
        let state = AccountState { nonce: 3, balance: U256::from(7), code_hash: B256::repeat_byte(9) };
        for (key, answer) in [
            (account, Answer::Account(Some(state), None)),
            (account, Answer::Account(None, None)),
            (Key::Slot(Address::ZERO, U256::from(5)), Answer::Slot(U256::from(11))),
            (Key::BlockHash(4), Answer::BlockHash(Some(B256::repeat_byte(2)))),
        ] {
            assert_eq!(Answer::decode(&key, &answer.encode()), Some(answer));
        }
    }

    #[test]
    fn an_account_is_read_from_its_three_answers() {
        let key = Key::Account(Address::with_last_byte(1));
        let answer = key.answer(vec![json!("0x10"), json!("0x2"), json!("0x6001")]).unwrap();
        let Answer::Account(Some(a), Some(code)) = answer else { panic!("{answer:?}") };
        assert_eq!((a.nonce, a.balance, a.code_hash), (2, U256::from(16), keccak256([0x60, 0x01])));
        assert_eq!(code.as_ref(), [0x60, 0x01]);
        assert_eq!(key.answer(vec![json!("0x0"), json!("0x0"), json!("0x")]).unwrap(), Answer::Account(None, None));
    }
}

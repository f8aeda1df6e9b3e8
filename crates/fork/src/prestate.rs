//! The guess of a call's reads as a `debug_traceCall` with geth's `prestateTracer` at the
//! fork block: the balance, nonce, code and storage of everything the call touches, as
//! they were *before* it ran (so exactly the fork block's values), in one round trip.
//! `eth_createAccessList` only names the keys and costs a second request for their values.
//! Upstreams without the method (or with the debug namespace off) refuse it; the client
//! asks once and then keeps to the access list.

use alloy_primitives::{keccak256, Address, Bytes, B256, KECCAK256_EMPTY, U256};
use preconf_chain::changes::AccountState;
use preconf_chain::error::UpstreamFailure;
use serde_json::{json, Value};

use crate::keys::{malformed, read, Answer, Key};
use crate::transport::Call;

pub const METHOD: &str = "debug_traceCall";

/// The trace of `request` at `block` (a hex number).
pub fn call(request: &Value, block: &str) -> Call {
    Call::new(METHOD, json!([request, block, { "tracer": "prestateTracer" }]))
}

/// Whether a refusal says the upstream does not offer the method (rather than failing this
/// one call): then it is not asked again.
pub fn unsupported(failure: &UpstreamFailure) -> bool {
    match failure {
        UpstreamFailure::Rpc { code, message, .. } => {
            let message = message.to_ascii_lowercase();
            matches!(code, -32601 | -32604)
                || ["not found", "not supported", "not available", "does not exist", "unsupported", "disabled"]
                    .iter()
                    .any(|w| message.contains(w))
        }
        UpstreamFailure::Malformed { .. } => true,
        _ => false,
    }
}

/// The accounts and slots of a prestate trace, as the keys' answers. A field left out is
/// zero or empty (geth omits a zero nonce and empty code).
pub fn answers(result: &Value) -> Result<Vec<(Key, Answer)>, UpstreamFailure> {
    let accounts = result.as_object().ok_or_else(|| malformed(METHOD, "not an object"))?;
    let mut found = Vec::new();
    for (address, account) in accounts {
        let address: Address = address.parse().map_err(|e| malformed(METHOD, e))?;
        let balance: U256 = optional(&account["balance"])?.unwrap_or_default();
        let nonce = match &account["nonce"] {
            Value::Null => 0,
            // geth writes a number, others a hex quantity.
            Value::Number(n) => n.as_u64().ok_or_else(|| malformed(METHOD, "a nonce out of range"))?,
            v => u64::try_from(read::<U256>(METHOD, v)?).map_err(|e| malformed(METHOD, e))?,
        };
        let code: Bytes = optional(&account["code"])?.unwrap_or_default();
        let answer = if nonce == 0 && balance.is_zero() && code.is_empty() {
            Answer::Account(None, None)
        } else {
            let code_hash = if code.is_empty() { KECCAK256_EMPTY } else { keccak256(&code) };
            Answer::Account(Some(AccountState { nonce, balance, code_hash }), (!code.is_empty()).then_some(code))
        };
        found.push((Key::Account(address), answer));
        for (slot, value) in account["storage"].as_object().into_iter().flatten() {
            let slot: B256 = slot.parse().map_err(|e| malformed(METHOD, e))?;
            let value: B256 = read(METHOD, value)?;
            found.push((Key::Slot(address, U256::from_be_bytes(slot.0)), Answer::Slot(U256::from_be_bytes(value.0))));
        }
    }
    Ok(found)
}

fn optional<T: serde::de::DeserializeOwned>(v: &Value) -> Result<Option<T>, UpstreamFailure> {
    if v.is_null() {
        return Ok(None);
    }
    read(METHOD, v).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_gives_accounts_with_their_code_and_slots() {
        let token = Address::with_last_byte(0xaa);
        let sender = Address::with_last_byte(0xbb);
        let empty = Address::with_last_byte(0xcc);
        let slot = format!("{:#x}", B256::with_last_byte(3));
        let trace = json!({
            format!("{token:#x}"): { "balance": "0x0", "nonce": 1, "code": "0x6001", "storage": { slot: format!("{:#x}", B256::with_last_byte(9)) } },
            sender.to_checksum(None): { "balance": "0x10", "nonce": "0x2" },
            format!("{empty:#x}"): { "balance": "0x0" },
        });
        let found: std::collections::HashMap<Key, Answer> = answers(&trace).unwrap().into_iter().collect();
        let Answer::Account(Some(t), Some(code)) = &found[&Key::Account(token)] else { panic!("{found:?}") };
        assert_eq!((t.nonce, t.code_hash, code.as_ref()), (1, keccak256([0x60, 0x01]), &[0x60, 0x01][..]));
        assert_eq!(found[&Key::Slot(token, U256::from(3))], Answer::Slot(U256::from(9)));
        let Answer::Account(Some(s), None) = &found[&Key::Account(sender)] else { panic!("{found:?}") };
        assert_eq!((s.nonce, s.balance, s.code_hash), (2, U256::from(16), KECCAK256_EMPTY));
        assert_eq!(found[&Key::Account(empty)], Answer::Account(None, None));
        assert!(answers(&json!("0x")).is_err());
    }

    #[test]
    fn only_a_missing_method_stops_asking() {
        let rpc = |code, message: &str| UpstreamFailure::Rpc { method: METHOD, code, message: message.into() };
        assert!(unsupported(&rpc(-32601, "the method debug_traceCall does not exist/is not available")));
        assert!(unsupported(&rpc(-32000, "Method not found")));
        assert!(!unsupported(&rpc(-32000, "insufficient funds for gas * price + value")));
    }
}

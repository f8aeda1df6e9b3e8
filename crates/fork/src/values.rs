//! `eth_getStorageValues` (execution-apis#752; reth, erigon, besu, anvil): every slot of a
//! batch in one call, `{address: [slot, ...]}` answered `{address: [value, ...]}` in the
//! order asked. Upstreams that predate it answer an error; the client asks once and then
//! keeps to `eth_getStorageAt`, one call per slot (still in one batch).

use std::collections::HashMap;

use alloy_primitives::{Address, B256, U256};
use preconf_chain::error::UpstreamFailure;
use serde_json::{Map, Value};

use crate::keys::malformed;
use crate::transport::Call;

/// The most slots one call may name (the method's limit at reth, besu and anvil).
pub const MAX_SLOTS: usize = 1024;

pub const METHOD: &str = "eth_getStorageValues";

/// Whether the upstream answers `eth_getStorageValues`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    Unknown,
    Yes,
    No,
}

/// One call for `slots` (at most `MAX_SLOTS`) at `block`.
pub fn call(slots: &[(Address, U256)], block: &str) -> Call {
    let mut request = Map::new();
    for (address, slot) in slots {
        let entry = request.entry(format!("{address:#x}")).or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = entry {
            list.push(Value::String(format!("{:#x}", B256::from(*slot))));
        }
    }
    Call::new(METHOD, Value::Array(vec![Value::Object(request), Value::String(block.to_string())]))
}

/// The values of `slots`, in their order, from the answer to `call(slots)`.
pub fn values(slots: &[(Address, U256)], answer: &Value) -> Result<Vec<U256>, UpstreamFailure> {
    let map = answer.as_object().ok_or_else(|| malformed(METHOD, "not an object"))?;
    let mut lists: HashMap<Address, &Vec<Value>> = HashMap::new();
    for (address, list) in map {
        let address: Address = address.parse().map_err(|e| malformed(METHOD, e))?;
        lists.insert(address, list.as_array().ok_or_else(|| malformed(METHOD, "a value list is not an array"))?);
    }
    let mut next: HashMap<Address, usize> = HashMap::new();
    slots
        .iter()
        .map(|(address, _)| {
            let i = next.entry(*address).or_default();
            let value =
                lists.get(address).and_then(|l| l.get(*i)).ok_or_else(|| malformed(METHOD, "a value missing"))?;
            *i += 1;
            let word: B256 = serde_json::from_value(value.clone()).map_err(|e| malformed(METHOD, e))?;
            Ok(U256::from_be_bytes(word.0))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn slots_are_grouped_by_address_and_read_back_in_order() {
        let (a, b) = (Address::with_last_byte(0xaa), Address::with_last_byte(0xbb));
        let slots = [(a, U256::from(1)), (b, U256::from(2)), (a, U256::from(3))];
        let c = call(&slots, "0x10");
        let request = &c.params[0];
        assert_eq!(request.as_object().unwrap().len(), 2);
        assert_eq!(request[format!("{a:#x}")].as_array().unwrap().len(), 2);
        assert_eq!(c.params[1], json!("0x10"));
        let word = |n: u8| format!("{:#x}", B256::with_last_byte(n));
        // Upstreams may spell the addresses in checksum case.
        let answer = json!({ a.to_checksum(None): [word(10), word(30)], format!("{b:#x}"): [word(20)] });
        assert_eq!(values(&slots, &answer).unwrap(), vec![U256::from(10), U256::from(20), U256::from(30)]);
        assert!(values(&slots, &json!({})).is_err());
    }
}

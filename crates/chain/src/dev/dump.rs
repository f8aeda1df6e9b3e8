//! `anvil_dumpState` / `anvil_loadState` in anvil's format: the gzip of a JSON object
//! `{block, accounts, best_block_number, blocks, transactions, historical_states}` whose
//! `accounts` maps each address to `{nonce, balance, code, storage}`.
//!
//! A dump holds the state as of the newest pre-confirmation (what `pending` reads). The
//! chain's history stays in its store: `blocks` and `transactions` are written empty, and
//! `block` and `best_block_number` null (see `Dump`). A load applies
//! `accounts` only, as state edits of the block being built (balances, nonces and code
//! replaced, storage merged slot by slot, as anvil does); the rest of a dump is ignored.

use std::collections::BTreeMap;
use std::io::Read;

use alloy_primitives::{Address, Bytes, B256, KECCAK256_EMPTY, U256};
use flate2::{read::GzDecoder, write::GzEncoder, Compression};
use serde::{Deserialize, Serialize};

use super::requests::{AccountEdit, Balance};
use super::DevError;
use crate::chain_state::ChainState;
use crate::changes::{AccountState, StateChanges};
use crate::error::{Cause, ChainResult, InternalError};

/// The largest state a load inflates a dump to: a few times a million accounts with
/// storage, and a bound on what a small gzip bomb can make the node allocate.
pub const MAX_STATE_JSON_BYTES: u64 = 2 << 30;

/// anvil's `SerializableState`. `block` and `best_block_number` are null: anvil (1.7)
/// looks the best block up among its own blocks and refuses a dump of a longer chain, while
/// without them it applies the accounts, as this node's loader does.
#[derive(Serialize)]
struct Dump {
    block: Option<()>,
    accounts: BTreeMap<Address, DumpAccount>,
    best_block_number: Option<u64>,
    blocks: [(); 0],
    transactions: [(); 0],
    historical_states: Option<()>,
}

#[derive(Serialize)]
struct DumpAccount {
    nonce: u64,
    balance: U256,
    code: Bytes,
    storage: BTreeMap<B256, B256>,
}

/// What a load reads of a dump: `accounts`. Numbers come as JSON numbers or hex strings.
#[derive(Deserialize)]
struct LoadedState {
    accounts: BTreeMap<Address, LoadedAccount>,
}

#[derive(Deserialize)]
struct LoadedAccount {
    #[serde(default)]
    nonce: Number,
    #[serde(default)]
    balance: Number,
    #[serde(default)]
    code: Bytes,
    #[serde(default)]
    storage: BTreeMap<U256, U256>,
}

#[derive(Deserialize, Default)]
#[serde(untagged)]
enum Number {
    Json(u64),
    Hex(U256),
    #[default]
    Zero,
}

impl Number {
    fn value(&self) -> U256 {
        match self {
            Number::Json(n) => U256::from(*n),
            Number::Hex(n) => *n,
            Number::Zero => U256::ZERO,
        }
    }
}

/// One account of the state being dumped.
struct Entry {
    state: AccountState,
    storage: BTreeMap<U256, U256>,
}

/// The state as of the newest pre-confirmation, gzip-compressed in anvil's format.
pub fn dump(chain: &ChainState) -> ChainResult<Vec<u8>> {
    let view = chain.view();
    let head = view.head_number();
    let mut accounts: BTreeMap<Address, Entry> = BTreeMap::new();
    view.snapshot.each_account(head, |address, state| {
        accounts.insert(address, Entry { state, storage: BTreeMap::new() });
    })?;
    view.snapshot.each_slot(head, |address, slot, value| {
        if let Some(e) = accounts.get_mut(&address) {
            e.storage.insert(slot, value);
        }
    })?;
    // The sealed blocks still being committed, then each pre-confirmation, oldest first.
    let tips = view.snapshot.tips().iter().map(|t| t.changes.clone());
    let layers = view.pending.iter().flat_map(|p| p.overlay.layers().iter().cloned());
    for changes in tips.chain(layers) {
        apply_changes(&mut accounts, &changes);
    }
    let state = view.pending_state();
    let mut out = BTreeMap::new();
    for (address, e) in accounts {
        let code = if e.state.code_hash == KECCAK256_EMPTY { Bytes::new() } else { state.code_bytes(&address)? };
        let storage = e.storage.into_iter().map(|(k, v)| (B256::from(k), B256::from(v))).collect();
        out.insert(address, DumpAccount { nonce: e.state.nonce, balance: e.state.balance, code, storage });
    }
    let dump = Dump {
        block: None,
        accounts: out,
        best_block_number: None,
        blocks: [],
        transactions: [],
        historical_states: None,
    };
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    serde_json::to_writer(&mut gz, &dump).map_err(|e| InternalError::StateDump(Cause::new(e)))?;
    gz.finish().map_err(|e| InternalError::StateDump(Cause::new(e)).into())
}

/// Folds one change set into the accounts being dumped.
fn apply_changes(accounts: &mut BTreeMap<Address, Entry>, changes: &StateChanges) {
    for (address, change) in &changes.accounts {
        let Some(state) = change.info else {
            accounts.remove(address);
            continue;
        };
        let e = accounts.entry(*address).or_insert_with(|| Entry { state, storage: BTreeMap::new() });
        e.state = state;
        if change.storage_wiped {
            e.storage.clear();
        }
        for (slot, value) in &change.storage {
            if value.is_zero() {
                e.storage.remove(slot);
            } else {
                e.storage.insert(*slot, *value);
            }
        }
    }
}

/// The edits a dump (gzip or plain JSON, as anvil takes it) makes: one per account.
pub fn edits_of(dump: &[u8]) -> Result<Vec<AccountEdit>, DevError> {
    let mut json = Vec::new();
    let source: Box<dyn Read + '_> = match dump {
        [0x1f, 0x8b, ..] => Box::new(GzDecoder::new(dump)),
        _ => Box::new(dump),
    };
    source.take(MAX_STATE_JSON_BYTES + 1).read_to_end(&mut json).map_err(|e| DevError::DumpNotGzip(e.to_string()))?;
    if json.len() as u64 > MAX_STATE_JSON_BYTES {
        return Err(DevError::DumpTooLarge { max: MAX_STATE_JSON_BYTES });
    }
    let state: LoadedState = serde_json::from_slice(&json).map_err(|e| DevError::DumpJson(e.to_string()))?;
    state
        .accounts
        .into_iter()
        .map(|(address, a)| {
            let nonce = a.nonce.value();
            let nonce = u64::try_from(nonce).map_err(|_| DevError::DumpNonce { address, nonce })?;
            // The EVM holds code under the EIP-7702 prefix only as a delegation: refused
            // here, with the account named, instead of failing when the state is loaded.
            if a.code.starts_with(&[0xef, 0x01]) && revm::bytecode::Bytecode::new_raw_checked(a.code.clone()).is_err() {
                return Err(DevError::DumpJson(format!(
                    "code of {address} starts with 0xef01 but is not an EIP-7702 delegation (0xef0100 and a 20-byte address)"
                )));
            }
            Ok(AccountEdit {
                address,
                balance: Some(Balance::Set(a.balance.value())),
                nonce: Some(nonce),
                code: Some(a.code),
                storage: a.storage.into_iter().collect(),
            })
        })
        .collect()
}

/// Plain JSON as gzip.
#[cfg(test)]
pub fn gzip(json: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(json).expect("writing to memory");
    gz.finish().expect("writing to memory")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_reads_anvils_dump_format_gzip_or_plain() {
        let json = br#"{"block":{"number":"0x0"},"best_block_number":0,"blocks":[],"transactions":[],
            "accounts":{"0x0000000000000000000000000000000000000001":{"nonce":3,"balance":"0x10","code":"0x6001",
            "storage":{"0x0000000000000000000000000000000000000000000000000000000000000003":"0x07"}}}}"#;
        for input in [gzip(json), json.to_vec()] {
            let edits = edits_of(&input).unwrap();
            assert_eq!(edits.len(), 1);
            let e = &edits[0];
            assert_eq!(e.address, Address::with_last_byte(1));
            assert_eq!(e.nonce, Some(3));
            assert!(matches!(e.balance, Some(Balance::Set(b)) if b == U256::from(16)));
            assert_eq!(e.code.as_ref().map(|c| &c[..]), Some(&[0x60, 0x01][..]));
            assert_eq!(e.storage, vec![(U256::from(3), U256::from(7))]);
        }
    }

    #[test]
    fn a_bad_dump_is_refused_with_the_reason() {
        let e = edits_of(b"{\"accounts\":{\"0x12\":{}}}").unwrap_err();
        assert!(e.to_string().starts_with("invalid state dump:"), "{e}");
        let e = edits_of(&[0x1f, 0x8b, 0, 1, 2]).unwrap_err();
        assert!(e.to_string().contains("not gzip"), "{e}");
    }
}

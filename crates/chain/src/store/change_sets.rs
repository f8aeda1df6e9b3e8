//! Per-block state change sets, kept by a node that publishes its chain (`--publish`): the
//! history tables are keyed by account, so "everything block N changed" cannot be read back
//! from them, and a leader must be able to republish any sealed block a stream lacks. Written
//! in the block's own transaction, so a block and its change set are durable together.
//!
//! The encoding (RLP, sorted, so equal change sets encode equally) is also what replication
//! sends on the wire.

use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use alloy_rlp::{Decodable, Encodable, RlpDecodable, RlpEncodable};
use redb::{ReadableDatabase, TableDefinition};

use super::Store;
use crate::changes::{AccountChange, AccountState, StateChanges};
use crate::error::{Cause, ChainResult, InternalError};

/// block number -> encoded `StateChanges`
pub(crate) const CHANGE_SETS: TableDefinition<u64, &[u8]> = TableDefinition::new("change_sets");

#[derive(RlpEncodable, RlpDecodable)]
struct Info {
    nonce: u64,
    balance: U256,
    code_hash: B256,
}

#[derive(RlpEncodable, RlpDecodable)]
struct Slot {
    slot: U256,
    value: U256,
}

#[derive(RlpEncodable, RlpDecodable)]
struct Account {
    address: Address,
    /// Empty when the account does not exist afterwards, else one entry.
    info: Vec<Info>,
    storage_wiped: bool,
    storage: Vec<Slot>,
}

#[derive(RlpEncodable, RlpDecodable)]
struct Code {
    hash: B256,
    code: Bytes,
}

#[derive(RlpEncodable, RlpDecodable)]
struct Changes {
    accounts: Vec<Account>,
    codes: Vec<Code>,
}

/// What went wrong reading an encoded change set.
#[derive(Debug, thiserror::Error)]
pub enum ChangeSetError {
    #[error("malformed change set: {0}")]
    Rlp(#[from] alloy_rlp::Error),
    #[error("code {0} does not hash to its key")]
    CodeHash(B256),
    #[error("account {0} appears twice")]
    DuplicateAccount(Address),
}

pub fn encode_changes(changes: &StateChanges, out: &mut dyn alloy_rlp::BufMut) {
    let mut accounts: Vec<Account> = changes
        .accounts
        .iter()
        .map(|(address, c)| {
            let mut storage: Vec<Slot> = c.storage.iter().map(|(s, v)| Slot { slot: *s, value: *v }).collect();
            storage.sort_unstable_by_key(|s| s.slot);
            Account {
                address: *address,
                info: c
                    .info
                    .map(|i| Info { nonce: i.nonce, balance: i.balance, code_hash: i.code_hash })
                    .into_iter()
                    .collect(),
                storage_wiped: c.storage_wiped,
                storage,
            }
        })
        .collect();
    accounts.sort_unstable_by_key(|a| a.address);
    let mut codes: Vec<Code> = changes.codes.iter().map(|(h, c)| Code { hash: *h, code: c.clone() }).collect();
    codes.sort_unstable_by_key(|c| c.hash);
    Changes { accounts, codes }.encode(out);
}

/// Decodes (from the front of `buf`) a change set written by `encode_changes`.
pub fn decode_changes(buf: &mut &[u8]) -> Result<StateChanges, ChangeSetError> {
    let decoded = Changes::decode(buf)?;
    let mut changes = StateChanges::default();
    for a in decoded.accounts {
        let change = AccountChange {
            info: a.info.into_iter().next().map(|i| AccountState {
                nonce: i.nonce,
                balance: i.balance,
                code_hash: i.code_hash,
            }),
            storage: a.storage.into_iter().map(|s| (s.slot, s.value)).collect(),
            storage_wiped: a.storage_wiped,
        };
        if changes.accounts.insert(a.address, change).is_some() {
            return Err(ChangeSetError::DuplicateAccount(a.address));
        }
    }
    for c in decoded.codes {
        if keccak256(&c.code) != c.hash {
            return Err(ChangeSetError::CodeHash(c.hash));
        }
        changes.codes.insert(c.hash, c.code);
    }
    Ok(changes)
}

/// Writes block `number`'s change set; the bytes it added to the store.
pub(super) fn write(txn: &redb::WriteTransaction, number: u64, changes: &StateChanges) -> ChainResult<usize> {
    let mut bytes = Vec::with_capacity(256);
    encode_changes(changes, &mut bytes);
    txn.open_table(CHANGE_SETS)?.insert(number, bytes.as_slice())?;
    Ok(8 + bytes.len())
}

impl Store {
    /// Keep each sealed block's change set from now on (a node that publishes its chain).
    pub fn keep_change_sets(&self, on: bool) {
        self.keep_change_sets.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Everything block `number` changed, if it was kept.
    pub fn change_set(&self, number: u64) -> ChainResult<Option<StateChanges>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(CHANGE_SETS)?;
        let Some(v) = table.get(number)? else { return Ok(None) };
        let mut bytes = v.value();
        decode_changes(&mut bytes)
            .map(Some)
            .map_err(|e| InternalError::CorruptChangeSet { number, source: Cause::new(e) }.into())
    }

    /// The oldest block from which on every block up to `head` has its change set: where a
    /// stream of this chain can start. `head + 1` when even the head has none.
    pub fn change_sets_from(&self, head: u64) -> ChainResult<u64> {
        use redb::{ReadableTable, ReadableTableMetadata};
        let txn = self.db.begin_read()?;
        let table = txn.open_table(CHANGE_SETS)?;
        // Usually one run (kept since the node started publishing): check it in O(1).
        if let (Some(first), Some(last)) = (table.first()?, table.last()?) {
            let (first, last) = (first.0.value(), last.0.value());
            if last == head && table.len()? == head - first + 1 {
                return Ok(first);
            }
        }
        let mut from = head + 1;
        for entry in table.range(..=head)?.rev() {
            if entry?.0.value() + 1 != from {
                break;
            }
            from -= 1;
        }
        Ok(from)
    }
}

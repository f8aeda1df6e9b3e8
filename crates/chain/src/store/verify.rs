//! `preconf-node verify`: recomputes the head's state root from scratch over the value
//! history (every account's and slot's newest version) with alloy-trie's `HashBuilder`,
//! and compares it with the head header and with the persisted trie. An operator's check
//! after a crash, and the tests' independent witness that the incremental trie is right.
//! It reads the whole state (memory grows with the number of accounts): a tool, not a
//! start-up step.

use std::collections::BTreeMap;

use alloy_primitives::{keccak256, Address, B256, U256};
use alloy_rlp::Decodable;
use alloy_trie::{HashBuilder, Nibbles, TrieAccount, EMPTY_ROOT_HASH};
use redb::{ReadableDatabase, ReadableTable};

use super::{codec, Store, ACCOUNTS, HEADERS, META, META_HEAD, STORAGE};
use crate::error::{Cause, ChainResult, ConfigError, InternalError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    pub head: u64,
    /// The state root in the head block's header.
    pub header_root: B256,
    /// Recomputed from the value history.
    pub recomputed_root: B256,
    /// What the persisted trie holds.
    pub trie_root: B256,
    pub accounts: u64,
    pub slots: u64,
}

impl VerifyReport {
    pub fn ok(&self) -> bool {
        self.header_root == self.recomputed_root && self.trie_root == self.recomputed_root
    }
}

impl Store {
    pub fn verify(&self) -> ChainResult<VerifyReport> {
        let txn = self.db.begin_read()?;
        let head =
            txn.open_table(META)?.get(META_HEAD)?.map(|v| codec::u64_from(v.value())).ok_or(ConfigError::NoChain)?;
        let header = txn.open_table(HEADERS)?.get(head)?.ok_or(InternalError::MissingBlock(head))?;
        let header = alloy_consensus::Header::decode(&mut header.value())
            .map_err(|e| InternalError::CorruptHeader { number: head, source: Cause::new(e) })?;

        // Newest version of every slot (keys sort by address, slot, block).
        let mut storage: BTreeMap<Address, BTreeMap<B256, U256>> = BTreeMap::new();
        let mut slots = 0u64;
        let mut current: Option<([u8; 52], U256)> = None;
        let flush = |entry: Option<([u8; 52], U256)>, storage: &mut BTreeMap<Address, BTreeMap<B256, U256>>| {
            if let Some((key, value)) = entry {
                if !value.is_zero() {
                    let address = Address::from_slice(&key[..20]);
                    storage.entry(address).or_default().insert(keccak256(&key[20..52]), value);
                }
            }
        };
        for entry in txn.open_table(STORAGE)?.iter()? {
            let (key, value) = entry?;
            let k = key.value();
            if codec::u64_from(&k[52..]) > head {
                continue;
            }
            let mut id = [0u8; 52];
            id.copy_from_slice(&k[..52]);
            if current.as_ref().is_some_and(|(c, _)| *c != id) {
                flush(current.take(), &mut storage);
            }
            current = Some((id, U256::from_be_bytes(*value.value())));
        }
        flush(current.take(), &mut storage);

        // Newest version of every account, with its storage root.
        let mut leaves: BTreeMap<B256, TrieAccount> = BTreeMap::new();
        let mut last: Option<(Address, Vec<u8>)> = None;
        let mut finish = |entry: Option<(Address, Vec<u8>)>, leaves: &mut BTreeMap<B256, TrieAccount>| {
            if let Some((address, value)) = entry {
                if let Some(a) = codec::decode_account(&value) {
                    let slots_of = storage.get(&address);
                    slots += slots_of.map_or(0, |s| s.len() as u64);
                    let storage_root = slots_of.map_or(EMPTY_ROOT_HASH, storage_root);
                    leaves.insert(keccak256(address), TrieAccount::new(a.nonce, a.balance, storage_root, a.code_hash));
                }
            }
        };
        for entry in txn.open_table(ACCOUNTS)?.iter()? {
            let (key, value) = entry?;
            let k = key.value();
            if codec::u64_from(&k[20..]) > head {
                continue;
            }
            let address = Address::from_slice(&k[..20]);
            if last.as_ref().is_some_and(|(a, _)| *a != address) {
                finish(last.take(), &mut leaves);
            }
            last = Some((address, value.value().to_vec()));
        }
        finish(last.take(), &mut leaves);

        let mut builder = HashBuilder::default();
        for (key, account) in &leaves {
            builder.add_leaf(Nibbles::unpack(key), &alloy_rlp::encode(account));
        }
        let recomputed_root = if leaves.is_empty() { EMPTY_ROOT_HASH } else { builder.root() };
        let trie = preconf_trie::TrieSnapshot::open(&txn)?;
        let trie_root = preconf_trie::current_root(&trie.latest())?;
        Ok(VerifyReport {
            head,
            header_root: header.state_root,
            recomputed_root,
            trie_root,
            accounts: leaves.len() as u64,
            slots,
        })
    }
}

fn storage_root(slots: &BTreeMap<B256, U256>) -> B256 {
    let mut builder = HashBuilder::default();
    for (key, value) in slots {
        builder.add_leaf(Nibbles::unpack(key), &alloy_rlp::encode(value));
    }
    builder.root()
}

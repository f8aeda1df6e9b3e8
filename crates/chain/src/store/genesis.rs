//! Seeding an empty store with a genesis alloc of any size, in key order. Accounts and
//! slots arrive from the streaming parser (`genesis::stream`) in the JSON's order, which is
//! random for the B-trees: inserted as they come, every chunk touched pages all over the
//! tables and the trie, and one transaction rewrote them again and again (153 GB written
//! for an 8.7 GB store at 10 M accounts). So the alloc is sorted first, twice, by an
//! external sort (`sorted`, spilling to the datadir): by address for the history tables,
//! which then fill front to back, and by hashed key for the trie, which is then built one
//! contiguous range of keys at a time, each node written about once. Memory stays bounded
//! by the sort's chunk; everything is one write transaction, so a crash leaves either no
//! genesis or all of it.

use std::path::PathBuf;

use alloy_consensus::Header;
use alloy_primitives::{keccak256, Address, Bytes, B256, KECCAK256_EMPTY, U256};
use alloy_trie::EMPTY_ROOT_HASH;
use preconf_trie::{AccountFields, AccountUpdate, TrieDiff, TrieWriter};
use redb::WriteTransaction;

use super::history::Tally;
use super::sorted::ExternalSort;
use super::{
    codec, write_block, BlockWrite, Store, StoredBody, StoredReceipts, ACCOUNTS, CODES, META, META_LIVE_BYTES,
    META_SPEC, STORAGE,
};
use crate::changes::{AccountState, StateChanges};
use crate::error::{ChainError, ChainResult, InternalError};

/// An account of the alloc, once all its fields were read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllocAccount {
    pub nonce: u64,
    pub balance: U256,
    pub code: Option<Bytes>,
}

/// Receives the alloc as it is parsed. For one address, `storage` may come several times
/// (in chunks, possibly before `account`), then `account` once.
pub trait AllocSink {
    fn storage(&mut self, address: Address, slots: Vec<(U256, U256)>) -> ChainResult<()>;
    fn account(&mut self, address: Address, account: AllocAccount) -> ChainResult<()>;
}

/// Records each sort holds in memory before spilling them (about 30 MiB per sort).
const SORT_CHUNK: usize = 250_000;
/// Accounts and slots folded into the trie per state-root computation.
const TRIE_CHUNK: usize = 50_000;

const TAG_ACCOUNT: u8 = 0;
const TAG_SLOT: u8 = 1;

pub struct GenesisWriter {
    txn: WriteTransaction,
    scratch: PathBuf,
    /// `address | tag [| slot]` -> account fields and code, or the slot's value.
    by_address: Option<ExternalSort>,
    /// `keccak(address) | tag [| keccak(slot)]` -> account fields, or the slot's value.
    by_hash: Option<ExternalSort>,
    /// Accounts and slots per state-root computation (`TRIE_CHUNK`).
    trie_chunk: usize,
    /// The block the alloc is written as of (0, or a fork's first block: `at_block`).
    block: u64,
    root: B256,
    accounts: u64,
    slots: u64,
    tally: Tally,
}

impl GenesisWriter {
    pub fn new(store: &Store) -> ChainResult<Self> {
        Self::with_chunks(store, SORT_CHUNK, TRIE_CHUNK)
    }

    fn with_chunks(store: &Store, sort_chunk: usize, trie_chunk: usize) -> ChainResult<Self> {
        let scratch = store.scratch_dir();
        Ok(Self {
            txn: store.begin_genesis()?,
            by_address: Some(ExternalSort::new(scratch.clone(), "by-address", sort_chunk)),
            by_hash: Some(ExternalSort::new(scratch.clone(), "by-hash", sort_chunk)),
            scratch,
            trie_chunk,
            block: 0,
            root: EMPTY_ROOT_HASH,
            accounts: 0,
            slots: 0,
            tally: Tally::default(),
        })
    }

    /// Writes the alloc as of `block` instead of 0: a fork's first block is the upstream's
    /// block N, and what the node writes there must not answer for blocks before it.
    pub fn at_block(mut self, block: u64) -> Self {
        self.block = block;
        self
    }

    /// Accounts and non-zero slots written (once the alloc is folded in: `state_root`).
    pub fn counts(&self) -> (u64, u64) {
        (self.accounts, self.slots)
    }

    /// Writes the sorted alloc: the history tables, then the trie. Once.
    fn fold(&mut self) -> ChainResult<()> {
        let (Some(by_address), Some(by_hash)) = (self.by_address.take(), self.by_hash.take()) else { return Ok(()) };
        self.write_history(by_address)?;
        self.write_trie(by_hash)?;
        let _ = std::fs::remove_dir_all(&self.scratch);
        Ok(())
    }

    /// Accounts, codes and slots as of the first block, in address order.
    fn write_history(&mut self, sort: ExternalSort) -> ChainResult<()> {
        let mut merged = sort.into_sorted()?;
        let mut accounts = self.txn.open_table(ACCOUNTS)?;
        let mut storage = self.txn.open_table(STORAGE)?;
        let mut codes = self.txn.open_table(CODES)?;
        while let Some((key, value)) = merged.next_record()? {
            let address = Address::from_slice(&key[..20]);
            if key[20] == TAG_ACCOUNT {
                let state = decode_fields(&value)?;
                if value.len() > 72 && codes.insert(&state.code_hash.0, &value[72..])?.is_none() {
                    self.tally.add(32, value.len() - 72);
                }
                let encoded = codec::encode_account(&state);
                if accounts.insert(&codec::account_key(&address, self.block), encoded.as_slice())?.is_none() {
                    self.tally.add(28, encoded.len());
                    self.accounts += 1;
                }
            } else {
                let slot = U256::from_be_slice(&key[21..53]);
                let value: [u8; 32] = value.as_slice().try_into().map_err(|_| corrupt())?;
                if storage.insert(&codec::storage_key(&address, &slot, self.block), &value)?.is_none() {
                    self.tally.add(60, 32);
                    self.slots += 1;
                }
            }
        }
        Ok(())
    }

    /// The trie, one contiguous range of hashed keys at a time (an account's storage may
    /// span several: its leaf is then written again with each part's storage root).
    fn write_trie(&mut self, sort: ExternalSort) -> ChainResult<()> {
        let mut merged = sort.into_sorted()?;
        let mut updates: Vec<AccountUpdate> = Vec::new();
        let mut pending = 0usize;
        let mut current: Option<AccountUpdate> = None;
        while let Some((key, value)) = merged.next_record()? {
            let hashed = B256::from_slice(&key[..32]);
            if current.as_ref().is_some_and(|c| c.hashed_address != hashed) {
                updates.extend(current.take());
                if pending >= self.trie_chunk {
                    self.fold_trie(&mut updates)?;
                    pending = 0;
                }
            }
            let update = current.get_or_insert_with(|| AccountUpdate {
                hashed_address: hashed,
                // Storage read before the account's other fields: a placeholder leaf,
                // replaced by the account's own record (which sorts first).
                account: Some(AccountFields { nonce: 0, balance: U256::ZERO, code_hash: KECCAK256_EMPTY }),
                storage_wiped: false,
                storage: Vec::new(),
            });
            pending += 1;
            if key[32] == TAG_ACCOUNT {
                let s = decode_fields(&value)?;
                update.account = Some(AccountFields { nonce: s.nonce, balance: s.balance, code_hash: s.code_hash });
                continue;
            }
            let slot = B256::from_slice(&key[33..65]);
            let value = U256::from_be_slice(&value);
            match update.storage.last_mut() {
                // The same slot twice (a repeated key in the file): the later value.
                Some(last) if last.0 == slot => last.1 = value,
                _ => update.storage.push((slot, value)),
            }
            if pending >= self.trie_chunk {
                // A large storage: fold what came so far and go on with the same account.
                let storage = std::mem::take(&mut update.storage);
                updates.push(AccountUpdate {
                    hashed_address: update.hashed_address,
                    account: update.account,
                    storage_wiped: false,
                    storage,
                });
                self.fold_trie(&mut updates)?;
                pending = 0;
            }
        }
        updates.extend(current);
        self.fold_trie(&mut updates)
    }

    fn fold_trie(&mut self, updates: &mut Vec<AccountUpdate>) -> ChainResult<()> {
        if updates.is_empty() {
            return Ok(());
        }
        let mut trie = TrieWriter::open(&self.txn)?;
        let (root, diff) = preconf_trie::state_root(&trie, updates)?;
        self.tally.0 += trie.write_diff(0, &diff)?.bytes;
        self.root = root;
        updates.clear();
        Ok(())
    }

    /// The state root of the whole alloc.
    pub fn state_root(&mut self) -> ChainResult<B256> {
        self.fold()?;
        Ok(self.root)
    }

    /// Writes block 0 and the genesis spec, and commits everything.
    pub fn finish(self, header: &Header, hash: B256, spec_json: &str) -> ChainResult<()> {
        self.finish_with_meta(header, hash, spec_json, &[])
    }

    /// `finish`, with `meta` entries in the same transaction (a fork's record).
    pub fn finish_with_meta(
        mut self,
        header: &Header,
        hash: B256,
        spec_json: &str,
        extra: &[(&str, &[u8])],
    ) -> ChainResult<()> {
        self.fold()?;
        write_block(
            &self.txn,
            &BlockWrite {
                header,
                hash,
                body: &StoredBody::default(),
                receipts: &StoredReceipts::default(),
                tx_hashes: &[],
                changes: &StateChanges::default(),
                trie: &TrieDiff::default(),
            },
            None,
            &mut self.tally,
        )?;
        let mut meta = self.txn.open_table(META)?;
        meta.insert(META_SPEC, spec_json.as_bytes())?;
        meta.insert(META_LIVE_BYTES, (self.tally.0.max(0) as u64).to_be_bytes().as_slice())?;
        for (key, value) in extra {
            meta.insert(*key, *value)?;
        }
        drop(meta);
        self.txn.commit()?;
        Ok(())
    }

    fn sorts(&mut self) -> ChainResult<(&mut ExternalSort, &mut ExternalSort)> {
        match (self.by_address.as_mut(), self.by_hash.as_mut()) {
            (Some(a), Some(h)) => Ok((a, h)),
            _ => Err(InternalError::AllocAfterRoot.into()),
        }
    }
}

fn corrupt() -> ChainError {
    InternalError::SortedRecord.into()
}

/// nonce (8) | balance (32) | code hash (32), as `codec::encode_account`.
fn decode_fields(value: &[u8]) -> ChainResult<AccountState> {
    codec::decode_account(value.get(..72).ok_or_else(corrupt)?).ok_or_else(corrupt)
}

impl AllocSink for GenesisWriter {
    fn storage(&mut self, address: Address, slots: Vec<(U256, U256)>) -> ChainResult<()> {
        let hashed = keccak256(address);
        let (by_address, by_hash) = self.sorts()?;
        for (slot, value) in slots.into_iter().filter(|(_, v)| !v.is_zero()) {
            let value = value.to_be_bytes::<32>().to_vec();
            by_address.push([address.as_slice(), &[TAG_SLOT], &slot.to_be_bytes::<32>()].concat(), value.clone())?;
            let hashed_slot = keccak256(B256::from(slot));
            by_hash.push([hashed.as_slice(), &[TAG_SLOT], hashed_slot.as_slice()].concat(), value)?;
        }
        Ok(())
    }

    fn account(&mut self, address: Address, account: AllocAccount) -> ChainResult<()> {
        let code_hash = account.code.as_ref().map(keccak256).unwrap_or(KECCAK256_EMPTY);
        let fields = codec::encode_account(&AccountState { nonce: account.nonce, balance: account.balance, code_hash });
        let code: &[u8] = account.code.as_ref().map_or(&[], |c| &c[..]);
        let with_code = [fields.as_slice(), code].concat();
        let (by_address, by_hash) = self.sorts()?;
        by_address.push([address.as_slice(), &[TAG_ACCOUNT]].concat(), with_code)?;
        by_hash.push([keccak256(address).as_slice(), &[TAG_ACCOUNT]].concat(), fields)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_genesis::GenesisAccount;
    use alloy_primitives::Bytes;
    use std::collections::BTreeMap;

    /// Spilled runs and many small trie folds (an account's storage across several) give
    /// the root computed from scratch over the same alloc, and every value is stored.
    #[test]
    fn a_sorted_import_in_small_chunks_gives_the_reference_root() {
        let store = Store::in_memory().unwrap();
        let mut w = GenesisWriter::with_chunks(&store, 700, 300).unwrap();
        let mut alloc: BTreeMap<Address, GenesisAccount> = BTreeMap::new();
        let code = Bytes::from_static(&[0x60, 0x01, 0x60, 0x00, 0x55]);
        for i in 0u64..3000 {
            let address = Address::from_slice(&keccak256(i.to_be_bytes())[..20]);
            let mut slots: Vec<(U256, U256)> = Vec::new();
            if i % 100 == 0 {
                slots = (0..(if i == 0 { 2000 } else { 20 })).map(|s| (U256::from(s), U256::from(s * 7 + 1))).collect();
                slots.push((U256::from(3), U256::ZERO)); // a zero slot is no slot
                w.storage(address, slots[..slots.len() / 2].to_vec()).unwrap();
                w.storage(address, slots[slots.len() / 2..].to_vec()).unwrap();
            }
            let code = (i % 100 == 0).then(|| code.clone());
            w.account(address, AllocAccount { nonce: i % 5, balance: U256::from(i * 1000), code: code.clone() })
                .unwrap();
            let storage: BTreeMap<B256, B256> =
                slots.iter().filter(|(_, v)| !v.is_zero()).map(|(k, v)| (B256::from(*k), B256::from(*v))).collect();
            alloc.insert(
                address,
                GenesisAccount::default()
                    .with_nonce(Some(i % 5))
                    .with_balance(U256::from(i * 1000))
                    .with_code(code)
                    .with_storage(Some(storage)),
            );
        }
        assert!(std::fs::read_dir(&w.scratch).is_ok_and(|d| d.count() > 2), "runs were spilled");
        let root = w.state_root().unwrap();
        assert_eq!(root, alloy_trie::root::state_root_ref_unhashed(&alloc));
        assert_eq!(w.counts(), (3000, 2000 + 29 * 20));
        assert!(!w.scratch.exists(), "scratch files removed");
    }
}

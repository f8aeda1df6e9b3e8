//! Seeding an empty store with a genesis alloc of any size: accounts and slots arrive from
//! the streaming parser (`genesis::stream`), are written to the history tables and folded
//! into the persisted trie chunk by chunk, all in one write transaction, so memory stays
//! bounded by the chunk size and a crash leaves either no genesis or all of it.

use alloy_consensus::Header;
use alloy_primitives::{keccak256, map::AddressMap, Address, Bytes, B256, KECCAK256_EMPTY, U256};
use alloy_trie::EMPTY_ROOT_HASH;
use preconf_trie::{AccountFields, AccountUpdate, TrieDiff, TrieWriter};
use redb::WriteTransaction;

use super::history::Tally;
use super::{
    codec, write_block, BlockWrite, Store, StoredBody, StoredReceipts, ACCOUNTS, CODES, META, META_LIVE_BYTES,
    META_SPEC, STORAGE,
};
use crate::changes::{AccountState, StateChanges};
use crate::error::ChainResult;

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

/// Accounts and slots buffered before they go to the tables and the trie.
const CHUNK: usize = 50_000;

#[derive(Default)]
struct Buffered {
    /// Known once the account's object has been read to the end.
    account: Option<AllocAccount>,
    slots: Vec<(U256, U256)>,
}

pub struct GenesisWriter {
    txn: WriteTransaction,
    buffer: AddressMap<Buffered>,
    buffered: usize,
    root: B256,
    accounts: u64,
    slots: u64,
    tally: Tally,
}

impl GenesisWriter {
    pub fn new(store: &Store) -> ChainResult<Self> {
        Ok(Self {
            txn: store.begin_genesis()?,
            buffer: Default::default(),
            buffered: 0,
            root: EMPTY_ROOT_HASH,
            accounts: 0,
            slots: 0,
            tally: Tally::default(),
        })
    }

    /// Accounts and non-zero slots written so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.accounts, self.slots)
    }

    fn maybe_flush(&mut self) -> ChainResult<()> {
        if self.buffered >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered accounts and slots as of block 0 and folds them into the trie.
    fn flush(&mut self) -> ChainResult<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let buffer = std::mem::take(&mut self.buffer);
        self.buffered = 0;
        let mut updates = Vec::with_capacity(buffer.len());
        {
            let mut accounts = self.txn.open_table(ACCOUNTS)?;
            let mut storage = self.txn.open_table(STORAGE)?;
            let mut codes = self.txn.open_table(CODES)?;
            for (address, b) in buffer {
                let fields = match &b.account {
                    Some(a) => {
                        let code_hash = a.code.as_ref().map(keccak256).unwrap_or(KECCAK256_EMPTY);
                        if let Some(code) = &a.code {
                            if codes.insert(&code_hash.0, code.as_ref())?.is_none() {
                                self.tally.add(32, code.len());
                            }
                        }
                        let state = AccountState { nonce: a.nonce, balance: a.balance, code_hash };
                        let encoded = codec::encode_account(&state);
                        if accounts.insert(&codec::account_key(&address, 0), encoded.as_slice())?.is_none() {
                            self.tally.add(28, encoded.len());
                        }
                        self.accounts += 1;
                        AccountFields { nonce: a.nonce, balance: a.balance, code_hash }
                    }
                    // Storage read before the account's other fields: a placeholder leaf,
                    // replaced in the chunk that has them.
                    None => AccountFields { nonce: 0, balance: U256::ZERO, code_hash: KECCAK256_EMPTY },
                };
                let mut hashed = Vec::with_capacity(b.slots.len());
                for (slot, value) in b.slots.iter().filter(|(_, v)| !v.is_zero()) {
                    if storage.insert(&codec::storage_key(&address, slot, 0), &value.to_be_bytes::<32>())?.is_none() {
                        self.tally.add(60, 32);
                    }
                    hashed.push((keccak256(B256::from(*slot)), *value));
                    self.slots += 1;
                }
                updates.push(AccountUpdate {
                    hashed_address: keccak256(address),
                    account: Some(fields),
                    storage_wiped: false,
                    storage: hashed,
                });
            }
        }
        let mut trie = TrieWriter::open(&self.txn)?;
        let (root, diff) = preconf_trie::state_root(&trie, &updates)?;
        self.tally.0 += trie.write_diff(0, &diff)?.bytes;
        self.root = root;
        Ok(())
    }

    /// The state root of the whole alloc (after the last chunk).
    pub fn state_root(&mut self) -> ChainResult<B256> {
        self.flush()?;
        Ok(self.root)
    }

    /// Writes block 0 and the genesis spec, and commits everything.
    pub fn finish(mut self, header: &Header, hash: B256, spec_json: &str) -> ChainResult<()> {
        self.flush()?;
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
        drop(meta);
        self.txn.commit()?;
        Ok(())
    }
}

impl AllocSink for GenesisWriter {
    fn storage(&mut self, address: Address, slots: Vec<(U256, U256)>) -> ChainResult<()> {
        self.buffered += slots.len();
        self.buffer.entry(address).or_default().slots.extend(slots);
        self.maybe_flush()
    }

    fn account(&mut self, address: Address, account: AllocAccount) -> ChainResult<()> {
        self.buffered += 1;
        self.buffer.entry(address).or_default().account = Some(account);
        self.maybe_flush()
    }
}

//! The reference: the state as plain maps, its root computed from all leaves with
//! `HashBuilder`, random blocks over it, and proof checks against it.

use std::collections::BTreeMap;

use alloy_primitives::{B256, KECCAK256_EMPTY, U256};
use alloy_trie::{proof::verify_proof, HashBuilder, Nibbles, TrieAccount, EMPTY_ROOT_HASH};
use preconf_trie::{account_proof, AccountFields, AccountUpdate, NodeReader};

use super::Rng;

#[derive(Clone, Debug)]
pub struct ModelAccount {
    pub fields: AccountFields,
    pub storage: BTreeMap<B256, U256>,
}

#[derive(Clone, Debug, Default)]
pub struct Model {
    pub accounts: BTreeMap<B256, ModelAccount>,
}

pub fn hash_builder_root(leaves: impl IntoIterator<Item = (B256, Vec<u8>)>) -> B256 {
    let mut builder = HashBuilder::default();
    for (key, value) in leaves {
        builder.add_leaf(Nibbles::unpack(key), &value);
    }
    builder.root()
}

impl Model {
    pub fn apply(&mut self, updates: &[AccountUpdate]) {
        for u in updates {
            let Some(fields) = u.account else {
                self.accounts.remove(&u.hashed_address);
                continue;
            };
            let account = self
                .accounts
                .entry(u.hashed_address)
                .or_insert_with(|| ModelAccount { fields, storage: BTreeMap::new() });
            account.fields = fields;
            if u.storage_wiped {
                account.storage.clear();
            }
            for (slot, value) in &u.storage {
                if value.is_zero() {
                    account.storage.remove(slot);
                } else {
                    account.storage.insert(*slot, *value);
                }
            }
        }
    }

    pub fn storage_root(&self, address: &B256) -> B256 {
        match self.accounts.get(address) {
            None => EMPTY_ROOT_HASH,
            Some(a) => hash_builder_root(a.storage.iter().map(|(k, v)| (*k, alloy_rlp::encode(v)))),
        }
    }

    pub fn account_leaf(&self, address: &B256) -> Option<Vec<u8>> {
        let a = self.accounts.get(address)?;
        let account =
            TrieAccount::new(a.fields.nonce, a.fields.balance, self.storage_root(address), a.fields.code_hash);
        Some(alloy_rlp::encode(account))
    }

    pub fn root(&self) -> B256 {
        hash_builder_root(self.accounts.keys().map(|k| (*k, self.account_leaf(k).unwrap())))
    }
}

pub fn random_fields(rng: &mut Rng) -> AccountFields {
    AccountFields {
        nonce: rng.below(1000),
        balance: U256::from(rng.next_u64()) * U256::from(1 + rng.below(1 << 20)),
        code_hash: if rng.chance(30) { rng.b256() } else { KECCAK256_EMPTY },
    }
}

/// Random blocks: creates, updates, deletes, storage writes, clears and wipes, re-created
/// accounts, keys sharing long prefixes, and now and then a block that removes all but one
/// key of a trie so branches collapse.
pub struct BlockGen {
    pub rng: Rng,
    deleted: Vec<B256>,
    /// Every how many blocks one collapses a trie to a single key.
    collapse_every: u64,
}

impl BlockGen {
    pub fn new(seed: u64) -> Self {
        BlockGen { rng: Rng::new(seed), deleted: Vec::new(), collapse_every: [9, 23, 41][seed as usize % 3] }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| &items[self.rng.below(items.len() as u64) as usize])
    }

    /// A new key: random, or sharing a prefix (often a long one) with one of `near`.
    fn fresh_key(&mut self, near: &[B256]) -> B256 {
        match self.pick(near).copied() {
            Some(base) if self.rng.chance(60) => {
                let shared = match self.rng.below(3) {
                    0 => 1 + self.rng.below(6) as usize,
                    1 => 58 + self.rng.below(6) as usize,
                    _ => self.rng.below(64) as usize,
                };
                self.rng.key_near(&base, shared)
            }
            _ => self.rng.b256(),
        }
    }

    fn slots(&mut self, existing: &[B256], count: u64) -> Vec<(B256, U256)> {
        let mut near = existing.to_vec();
        (0..count)
            .map(|_| {
                let key = self.fresh_key(&near);
                near.push(key);
                (key, self.rng.value())
            })
            .collect()
    }

    pub fn next_block(&mut self, model: &Model, block: u64) -> Vec<AccountUpdate> {
        let keys: Vec<B256> = model.accounts.keys().copied().collect();
        let mut out: BTreeMap<B256, AccountUpdate> = BTreeMap::new();
        if block % self.collapse_every == self.collapse_every - 1 && keys.len() > 2 {
            self.collapse_block(model, &keys, &mut out);
            return out.into_values().collect();
        }
        let ops = if block == 0 { 40 } else { 1 + self.rng.below(20) };
        for _ in 0..ops {
            let target = self.pick(&keys).copied();
            let kind = if target.is_none() { 0 } else { self.rng.below(100) };
            let update = match (kind, target) {
                (0..=19, _) | (_, None) => {
                    let address = self.fresh_key(&keys);
                    let count = self.rng.below(7);
                    let storage = self.slots(&[], count);
                    AccountUpdate {
                        hashed_address: address,
                        account: Some(random_fields(&mut self.rng)),
                        storage_wiped: true,
                        storage,
                    }
                }
                (20..=24, Some(_)) => {
                    let Some(address) = self.pick(&self.deleted.clone()).copied() else {
                        continue;
                    };
                    let count = self.rng.below(4);
                    let storage = self.slots(&[], count);
                    let wiped = self.rng.chance(50);
                    AccountUpdate {
                        hashed_address: address,
                        account: Some(random_fields(&mut self.rng)),
                        storage_wiped: wiped,
                        storage,
                    }
                }
                (25..=49, Some(address)) => AccountUpdate {
                    hashed_address: address,
                    account: Some(random_fields(&mut self.rng)),
                    storage_wiped: false,
                    storage: vec![],
                },
                (50..=74, Some(address)) => {
                    let account = &model.accounts[&address];
                    let existing: Vec<B256> = account.storage.keys().copied().collect();
                    let mut storage = Vec::new();
                    for _ in 0..1 + self.rng.below(6) {
                        match (self.rng.below(3), self.pick(&existing).copied()) {
                            (0, Some(slot)) => storage.push((slot, U256::ZERO)),
                            (1, Some(slot)) => storage.push((slot, self.rng.value())),
                            _ => storage.extend(self.slots(&existing, 1)),
                        }
                    }
                    if self.rng.chance(10) {
                        storage.push((self.rng.b256(), U256::ZERO)); // clearing an absent slot
                    }
                    AccountUpdate {
                        hashed_address: address,
                        account: Some(account.fields),
                        storage_wiped: false,
                        storage,
                    }
                }
                (75..=84, Some(address)) => {
                    self.deleted.push(address);
                    AccountUpdate { hashed_address: address, account: None, storage_wiped: true, storage: vec![] }
                }
                (85..=92, Some(address)) => {
                    let count = self.rng.below(4);
                    let storage = self.slots(&[], count);
                    let fields = model.accounts[&address].fields;
                    AccountUpdate { hashed_address: address, account: Some(fields), storage_wiped: true, storage }
                }
                (_, Some(address)) => {
                    // Clear every slot one by one: the storage trie empties through collapses.
                    let account = &model.accounts[&address];
                    let storage = account.storage.keys().map(|k| (*k, U256::ZERO)).collect();
                    AccountUpdate {
                        hashed_address: address,
                        account: Some(account.fields),
                        storage_wiped: false,
                        storage,
                    }
                }
            };
            out.entry(update.hashed_address).or_insert(update);
        }
        out.into_values().collect()
    }

    /// Removes all but one account, or all but one slot of the account with most storage.
    fn collapse_block(&mut self, model: &Model, keys: &[B256], out: &mut BTreeMap<B256, AccountUpdate>) {
        let (richest, account) = model.accounts.iter().max_by_key(|(_, a)| a.storage.len()).unwrap();
        if self.rng.chance(50) && account.storage.len() > 2 {
            let keep = self.rng.below(account.storage.len() as u64) as usize;
            let storage =
                account.storage.keys().enumerate().filter(|(i, _)| *i != keep).map(|(_, k)| (*k, U256::ZERO)).collect();
            let update = AccountUpdate {
                hashed_address: *richest,
                account: Some(account.fields),
                storage_wiped: false,
                storage,
            };
            out.insert(*richest, update);
            return;
        }
        let keep = self.rng.below(keys.len() as u64) as usize;
        for (i, key) in keys.iter().enumerate().filter(|(i, _)| *i != keep) {
            let _ = i;
            self.deleted.push(*key);
            out.insert(
                *key,
                AccountUpdate { hashed_address: *key, account: None, storage_wiped: true, storage: vec![] },
            );
        }
    }
}

/// Proves present and absent accounts and slots through `reader` and verifies each proof
/// against `root` with alloy-trie's independent verifier and the model's values.
pub fn check_proofs<R: NodeReader>(reader: &R, model: &Model, root: B256, rng: &mut Rng, count: usize) -> usize {
    let keys: Vec<B256> = model.accounts.keys().copied().collect();
    let mut targets: Vec<B256> =
        (0..count).filter(|_| !keys.is_empty()).map(|_| keys[rng.below(keys.len() as u64) as usize]).collect();
    targets.push(rng.b256());
    if let Some(k) = keys.first() {
        let shared = 40 + rng.below(23) as usize;
        targets.push(rng.key_near(k, shared));
    }
    let mut checked = 0;
    for address in targets {
        let existing: Vec<B256> =
            model.accounts.get(&address).map(|a| a.storage.keys().copied().collect()).unwrap_or_default();
        let mut slots: Vec<B256> = existing.iter().take(3).copied().collect();
        slots.push(rng.b256());
        if let Some(s) = existing.first() {
            slots.push(rng.key_near(s, 62));
        }
        let proof = account_proof(reader, address, &slots).unwrap();
        let leaf = model.account_leaf(&address);
        verify_proof(root, Nibbles::unpack(address), leaf.clone(), &proof.proof)
            .unwrap_or_else(|e| panic!("account proof for {address}: {e}"));
        assert_eq!(proof.account.map(alloy_rlp::encode), leaf);
        let storage_root = model.storage_root(&address);
        for sp in &proof.storage {
            let value = model.accounts.get(&address).and_then(|a| a.storage.get(&sp.hashed_slot)).copied();
            assert_eq!(sp.value, value.unwrap_or_default());
            verify_proof(storage_root, Nibbles::unpack(sp.hashed_slot), value.map(alloy_rlp::encode), &sp.proof)
                .unwrap_or_else(|e| panic!("storage proof for {address}/{}: {e}", sp.hashed_slot));
            checked += 1;
        }
        checked += 1;
    }
    checked
}

//! The state a block executes on when the node holds only a witness of it: every trie node
//! and code the block touches, keyed by keccak (what kona and op-program prove blocks with).
//! Untouched subtrees stay hashes. It serves revm's reads (accounts, storage, code) and the
//! trie's node reads by path, so the post-state root is computed over the same nodes.

use std::collections::HashMap;

use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use alloy_rlp::Decodable;
use alloy_trie::nodes::{RlpNode, TrieNode};
use alloy_trie::{Nibbles, TrieAccount};
use preconf_trie::{NodeReader, TrieError, TrieResult};
use revm::bytecode::Bytecode;
use revm::database_interface::{DBErrorMarker, DatabaseRef};
use revm::state::AccountInfo;

#[derive(Debug, Clone, thiserror::Error)]
pub enum WitnessError {
    #[error("the witness lacks the preimage of {0}")]
    Missing(B256),
    #[error("witness node {0} does not decode: {1}")]
    Corrupt(B256, String),
    #[error("block hash {0} is not in the witness")]
    NoBlockHash(u64),
}

impl DBErrorMarker for WitnessError {}

/// Preimages by keccak, over a state root.
pub struct WitnessState {
    pub root: B256,
    preimages: HashMap<B256, Bytes>,
}

impl WitnessState {
    pub fn new(root: B256, preimages: HashMap<B256, Bytes>) -> Self {
        Self { root, preimages }
    }

    fn preimage(&self, hash: &B256) -> Result<&Bytes, WitnessError> {
        self.preimages.get(hash).ok_or(WitnessError::Missing(*hash))
    }

    /// The RLP of the node a reference names: looked up when it is a hash, itself when inline.
    fn resolve(&self, reference: &[u8]) -> Result<Bytes, WitnessError> {
        let node = RlpNode::from_raw(reference).ok_or(WitnessError::Corrupt(B256::ZERO, "bad reference".into()))?;
        match node.as_hash() {
            Some(hash) => self.preimage(&hash).cloned(),
            None => Ok(Bytes::copy_from_slice(reference)),
        }
    }

    /// The node at `path` below the trie whose root is `root`; `None` where there is none.
    fn node_at(&self, root: B256, path: &Nibbles) -> Result<Option<Bytes>, WitnessError> {
        self.walk(root, path, Some(path.len()))
    }

    /// The value under `key` (already hashed) in the trie at `root`.
    fn get(&self, root: B256, key: B256) -> Result<Option<Bytes>, WitnessError> {
        self.walk(root, &Nibbles::unpack(key), None)
    }

    /// Follows `path` down from `root`. With `stop` the walk returns the node that many
    /// nibbles down (the trie's node reads); without, the value of the leaf holding the whole
    /// path (revm's reads). `None` where the path leaves the trie.
    fn walk(&self, root: B256, path: &Nibbles, stop: Option<usize>) -> Result<Option<Bytes>, WitnessError> {
        if root == alloy_trie::EMPTY_ROOT_HASH {
            return Ok(None);
        }
        let mut bytes = self.preimage(&root)?.clone();
        let mut depth = 0;
        loop {
            if stop == Some(depth) {
                return Ok(Some(bytes));
            }
            let node = TrieNode::decode(&mut &bytes[..])
                .map_err(|e| WitnessError::Corrupt(keccak256(&bytes), e.to_string()))?;
            let rest = path.slice(depth..);
            match node {
                TrieNode::Branch(branch) => {
                    let Some(nibble) = path.get(depth) else { return Ok(None) };
                    let branch_ref = branch.as_ref();
                    let Some(child) = branch_ref.children().find(|(n, _)| *n == nibble).and_then(|(_, c)| c) else {
                        return Ok(None);
                    };
                    bytes = self.resolve(child)?;
                    depth += 1;
                }
                TrieNode::Extension(ext) => {
                    // A path that ends inside the extension's key names no node.
                    if !rest.starts_with(&ext.key) {
                        return Ok(None);
                    }
                    bytes = self.resolve(&ext.child)?;
                    depth += ext.key.len();
                }
                TrieNode::Leaf(leaf) => {
                    return Ok((stop.is_none() && rest == leaf.key).then(|| Bytes::from(leaf.value)));
                }
                TrieNode::EmptyRoot => return Ok(None),
            }
        }
    }

    fn account(&self, address: &Address) -> Result<Option<TrieAccount>, WitnessError> {
        let Some(value) = self.get(self.root, keccak256(address))? else { return Ok(None) };
        TrieAccount::decode(&mut &value[..])
            .map(Some)
            .map_err(|e| WitnessError::Corrupt(keccak256(address), e.to_string()))
    }

    fn storage_root_of(&self, hashed_address: &B256) -> TrieResult<B256> {
        let value = self.get(self.root, *hashed_address).map_err(|e| TrieError::CorruptNode {
            owner: None,
            path: Nibbles::default(),
            reason: e.to_string(),
        })?;
        Ok(match value {
            Some(v) => TrieAccount::decode(&mut &v[..]).map(|a| a.storage_root).unwrap_or(alloy_trie::EMPTY_ROOT_HASH),
            None => alloy_trie::EMPTY_ROOT_HASH,
        })
    }
}

impl DatabaseRef for WitnessState {
    type Error = WitnessError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, Self::Error> {
        let Some(account) = self.account(&address)? else { return Ok(None) };
        let code = match account.code_hash {
            alloy_primitives::KECCAK256_EMPTY => None,
            hash => Some(Bytecode::new_raw(self.preimage(&hash)?.clone())),
        };
        Ok(Some(AccountInfo {
            balance: account.balance,
            nonce: account.nonce,
            code_hash: account.code_hash,
            code,
            ..Default::default()
        }))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, Self::Error> {
        Ok(Bytecode::new_raw(self.preimage(&code_hash)?.clone()))
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, Self::Error> {
        let Some(account) = self.account(&address)? else { return Ok(U256::ZERO) };
        let Some(value) = self.get(account.storage_root, keccak256(B256::from(index)))? else { return Ok(U256::ZERO) };
        U256::decode(&mut &value[..]).map_err(|e| WitnessError::Corrupt(keccak256(B256::from(index)), e.to_string()))
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, Self::Error> {
        Err(WitnessError::NoBlockHash(number))
    }
}

impl NodeReader for WitnessState {
    fn account_node(&self, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        self.node_at(self.root, path).map_err(|e| TrieError::CorruptNode {
            owner: None,
            path: *path,
            reason: e.to_string(),
        })
    }

    fn storage_node(&self, owner: &B256, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        let root = self.storage_root_of(owner)?;
        self.node_at(root, path).map_err(|e| TrieError::CorruptNode {
            owner: Some(*owner),
            path: *path,
            reason: e.to_string(),
        })
    }
}

//! EIP-1186 proofs: the nodes from the root to a key, root first. Like geth's, a proof
//! lists only nodes referenced by hash; nodes shorter than 32 bytes are inside their
//! parent's RLP, where verifiers (alloy-trie's `verify_proof`) find them.

use alloy_primitives::{keccak256, Bytes, B256, U256};
use alloy_rlp::Decodable;
use alloy_trie::{Nibbles, TrieAccount};

use crate::account::decode_account;
use crate::error::{TrieError, TrieResult};
use crate::mpt::{decode_node, DecodedNode, Link};
use crate::reader::{NodeReader, TrieSource};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountProof {
    pub hashed_address: B256,
    /// The account leaf; `None` when the account does not exist (the proof shows absence).
    pub account: Option<TrieAccount>,
    pub proof: Vec<Bytes>,
    /// One per requested slot, in request order.
    pub storage: Vec<StorageProof>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageProof {
    pub hashed_slot: B256,
    /// Zero when the slot is empty (the proof shows absence).
    pub value: U256,
    pub proof: Vec<Bytes>,
}

/// Proves an account and some of its storage slots against the reader's state root.
pub fn account_proof<R: NodeReader + ?Sized>(
    reader: &R,
    hashed_address: B256,
    hashed_slots: &[B256],
) -> TrieResult<AccountProof> {
    let (leaf, proof) = prove(&TrieSource { reader, owner: None }, &hashed_address)?;
    let account = leaf.map(|l| decode_account(&l, hashed_address)).transpose()?;
    let storage_source = TrieSource { reader, owner: Some(hashed_address) };
    let storage = hashed_slots
        .iter()
        .map(|slot| {
            let (value, proof) = prove(&storage_source, slot)?;
            let value = match value {
                Some(v) => U256::decode(&mut &v[..]).map_err(|e| TrieError::CorruptNode {
                    owner: Some(hashed_address),
                    path: Nibbles::unpack(slot),
                    reason: format!("storage leaf: {e}"),
                })?,
                None => U256::ZERO,
            };
            Ok(StorageProof { hashed_slot: *slot, value, proof })
        })
        .collect::<TrieResult<Vec<_>>>()?;
    Ok(AccountProof { hashed_address, account, proof, storage })
}

/// The value at `key` (if any) and the hashed nodes on its path.
fn prove<R: NodeReader + ?Sized>(source: &TrieSource<'_, R>, key: &B256) -> TrieResult<(Option<Vec<u8>>, Vec<Bytes>)> {
    let key = Nibbles::unpack(key);
    let mut path = Nibbles::new();
    let mut proof = Vec::new();
    let Some(mut bytes) = source.load(&path)? else {
        return Ok((None, proof));
    };
    proof.push(bytes.clone());
    loop {
        let rest = key.slice(path.len()..);
        let next = match decode_node(&bytes, source.owner, &path)? {
            DecodedNode::Leaf { key: leaf_key, value } => {
                return Ok(((leaf_key == rest).then_some(value), proof));
            }
            DecodedNode::Extension { key: ext_key, child } => {
                if !rest.starts_with(&ext_key) {
                    return Ok((None, proof));
                }
                path = path.join(&ext_key);
                child
            }
            DecodedNode::Branch { mut children } => {
                let n = rest.get_unchecked(0);
                path.push_unchecked(n);
                std::mem::take(&mut children[n as usize])
            }
        };
        let Link::Stored(reference) = next else {
            return Ok((None, proof));
        };
        bytes = match reference.as_hash() {
            Some(hash) => {
                let node = source.load(&path)?.ok_or(TrieError::MissingNode { owner: source.owner, path })?;
                if keccak256(&node) != hash {
                    return Err(TrieError::CorruptNode {
                        owner: source.owner,
                        path,
                        reason: "hash differs from the parent's reference".into(),
                    });
                }
                proof.push(node.clone());
                node
            }
            None => Bytes::copy_from_slice(&reference),
        };
    }
}

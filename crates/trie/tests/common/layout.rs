//! Structural check of the stored layout at the head: the live (newest, non-tombstone)
//! node versions are exactly the nodes reachable from the root, each at its own path,
//! inline ones included, with hashes matching their parents' references.

use std::collections::{BTreeMap, BTreeSet};

use alloy_primitives::{keccak256, Bytes, B256};
use alloy_rlp::Decodable;
use alloy_trie::nodes::TrieNode;
use alloy_trie::{Nibbles, TrieAccount, EMPTY_ROOT_HASH};
use preconf_trie::{NodeReader, TrieSnapshot, ACCOUNT_NODES, STORAGE_NODES};
use redb::{Database, ReadableDatabase, ReadableTable};

fn path_bytes(path: &Nibbles) -> Vec<u8> {
    let mut out = vec![0u8; 33];
    path.pack_to(&mut out[..32]);
    out[32] = path.len() as u8;
    out
}

/// Newest version per (owner, path) in a node table whose keys are `prefix | path (33) | block (8)`.
fn live_entries<T: ReadableTable<&'static [u8; N], &'static [u8]>, const N: usize>(
    table: &T,
) -> BTreeMap<Vec<u8>, bool> {
    let mut newest: BTreeMap<Vec<u8>, bool> = BTreeMap::new();
    for entry in table.iter().unwrap() {
        let (k, v) = entry.unwrap();
        newest.insert(k.value()[..N - 8].to_vec(), !v.value().is_empty());
    }
    newest
}

struct Walk<'a> {
    load: &'a dyn Fn(&Nibbles) -> Option<Bytes>,
    reachable: BTreeSet<Vec<u8>>,
    leaves: Vec<(Nibbles, Vec<u8>)>,
    inline: usize,
}

impl Walk<'_> {
    fn node(&mut self, bytes: &[u8], path: Nibbles) {
        assert!(self.reachable.insert(path_bytes(&path)), "path {path:?} reached twice");
        match TrieNode::decode(&mut &bytes[..]).unwrap() {
            TrieNode::Leaf(leaf) => self.leaves.push((path.join(&leaf.key), leaf.value)),
            TrieNode::Extension(ext) => self.child(&ext.child, path.join(&ext.key)),
            TrieNode::Branch(branch) => {
                for (i, nibble) in branch.state_mask.iter().enumerate() {
                    let mut at = path;
                    at.push(nibble);
                    self.child(&branch.stack[i], at);
                }
            }
            TrieNode::EmptyRoot => panic!("empty root stored at {path:?}"),
        }
    }

    fn child(&mut self, reference: &[u8], path: Nibbles) {
        let stored = (self.load)(&path).unwrap_or_else(|| panic!("node at {path:?} not stored"));
        if reference.len() == 33 {
            assert_eq!(keccak256(&stored).as_slice(), &reference[1..], "hash of node at {path:?}");
        } else {
            assert_eq!(stored.as_ref(), reference, "inline node at {path:?} stored differently");
            self.inline += 1;
        }
        self.node(&stored, path);
    }
}

/// Counts of what was checked at the head.
#[derive(Debug, Default)]
pub struct Layout {
    pub account_nodes: usize,
    pub storage_nodes: usize,
    /// Nodes shorter than 32 bytes, inlined in their parent and stored at their own path.
    pub inline_nodes: usize,
}

pub fn check_layout(db: &Database, expected_root: B256) -> Layout {
    let txn = db.begin_read().unwrap();
    let snapshot = TrieSnapshot::open(&txn).unwrap();
    let reader = snapshot.latest();

    let load = |p: &Nibbles| reader.account_node(p).unwrap();
    let mut walk = Walk { load: &load, reachable: BTreeSet::new(), leaves: Vec::new(), inline: 0 };
    match load(&Nibbles::new()) {
        Some(root) => {
            assert_eq!(keccak256(&root), expected_root);
            walk.node(&root, Nibbles::new());
        }
        None => assert_eq!(expected_root, EMPTY_ROOT_HASH),
    }
    let live: BTreeSet<Vec<u8>> =
        live_entries(&txn.open_table(ACCOUNT_NODES).unwrap()).into_iter().filter(|(_, l)| *l).map(|(k, _)| k).collect();
    assert_eq!(live, walk.reachable, "stored account nodes differ from the reachable ones");
    let account_nodes = live.len();
    let mut inline_nodes = walk.inline;

    let mut reachable_storage = BTreeSet::new();
    for (key, leaf) in std::mem::take(&mut walk.leaves) {
        let owner = B256::from_slice(&key.pack());
        let account = TrieAccount::decode(&mut &leaf[..]).unwrap();
        let load = |p: &Nibbles| reader.storage_node(&owner, p).unwrap();
        let mut storage = Walk { load: &load, reachable: BTreeSet::new(), leaves: Vec::new(), inline: 0 };
        match load(&Nibbles::new()) {
            Some(root) => {
                assert_eq!(keccak256(&root), account.storage_root, "storage root of {owner}");
                storage.node(&root, Nibbles::new());
            }
            None => assert_eq!(account.storage_root, EMPTY_ROOT_HASH, "storage of {owner} not stored"),
        }
        inline_nodes += storage.inline;
        for path in storage.reachable {
            reachable_storage.insert([owner.as_slice(), &path].concat());
        }
    }
    let live: BTreeSet<Vec<u8>> =
        live_entries(&txn.open_table(STORAGE_NODES).unwrap()).into_iter().filter(|(_, l)| *l).map(|(k, _)| k).collect();
    assert_eq!(live.len(), reachable_storage.len(), "stored storage nodes differ from the reachable ones");
    assert_eq!(live, reachable_storage, "stored storage nodes differ from the reachable ones");
    Layout { account_nodes, storage_nodes: live.len(), inline_nodes }
}

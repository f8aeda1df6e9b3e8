//! The transactions and receipts tries of a block being built: keys `rlp(index)`, values
//! appended in order and never changed. Every pre-confirmation publishes a header with both
//! roots, so the builder asks for them at every tick while the block grows, and
//! recomputing them from all leaves would make a tick's cost grow with the block. This trie
//! keeps each node's reference between root computations and rehashes only the
//! nodes on the paths of the leaves appended since: O(new leaves × depth) per root.

use alloy_primitives::{keccak256, Bytes, B256};
use alloy_trie::nodes::RlpNode;
use alloy_trie::{Nibbles, TrieMask, EMPTY_ROOT_HASH};

use crate::mpt::node::{encode_branch, encode_extension, encode_leaf};

enum Node {
    Empty,
    /// `key`: the rest of the key below the node's position.
    Leaf {
        key: Nibbles,
        value: Bytes,
    },
    Extension {
        key: Nibbles,
        child: Box<Slot>,
    },
    /// `rlp(index)` keys are prefix-free, so a branch never holds a value.
    Branch {
        children: Box<[Slot; 16]>,
    },
}

/// A node and its reference as its parent holds it, kept until something below changes.
struct Slot {
    node: Node,
    rlp: Option<RlpNode>,
}

impl Default for Slot {
    fn default() -> Self {
        Self { node: Node::Empty, rlp: None }
    }
}

impl Slot {
    fn new(node: Node) -> Self {
        Self { node, rlp: None }
    }
}

/// An append-only ordered trie whose root costs only what was appended since the last one.
#[derive(Default)]
pub struct OrderedTrie {
    root: Slot,
    len: usize,
    buf: Vec<u8>,
}

impl OrderedTrie {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends the next item (its encoding, as the leaf value).
    pub fn push(&mut self, value: Bytes) {
        let key = Nibbles::unpack(alloy_rlp::encode_fixed_size(&self.len));
        insert(&mut self.root, key, value);
        self.len += 1;
    }

    /// The root over every item appended so far.
    pub fn root(&mut self) -> B256 {
        match reference(&mut self.root, &mut self.buf) {
            None => EMPTY_ROOT_HASH,
            // The root is always referenced by hash, even when its RLP is short.
            Some(r) => r.as_hash().unwrap_or_else(|| keccak256(r.as_slice())),
        }
    }
}

/// `node` with `prefix` in front: itself when the prefix is empty, else under an extension.
fn under_prefix(prefix: Nibbles, node: Node) -> Node {
    if prefix.is_empty() {
        node
    } else {
        Node::Extension { key: prefix, child: Box::new(Slot::new(node)) }
    }
}

fn insert(slot: &mut Slot, key: Nibbles, value: Bytes) {
    slot.rlp = None;
    slot.node = match std::mem::replace(&mut slot.node, Node::Empty) {
        Node::Empty => Node::Leaf { key, value },
        Node::Leaf { key: old_key, value: old_value } => {
            // Keys are distinct and prefix-free: they part before either ends.
            let common = old_key.common_prefix_length(&key);
            let mut children: Box<[Slot; 16]> = Default::default();
            children[old_key.get_unchecked(common) as usize] =
                Slot::new(Node::Leaf { key: old_key.slice(common + 1..), value: old_value });
            children[key.get_unchecked(common) as usize] =
                Slot::new(Node::Leaf { key: key.slice(common + 1..), value });
            under_prefix(key.slice(..common), Node::Branch { children })
        }
        Node::Extension { key: ext_key, mut child } => {
            let common = ext_key.common_prefix_length(&key);
            if common == ext_key.len() {
                insert(&mut child, key.slice(common..), value);
                Node::Extension { key: ext_key, child }
            } else {
                // A branch where the keys part; the extension's child keeps its reference.
                let mut children: Box<[Slot; 16]> = Default::default();
                children[ext_key.get_unchecked(common) as usize] = if common + 1 < ext_key.len() {
                    Slot::new(Node::Extension { key: ext_key.slice(common + 1..), child })
                } else {
                    *child
                };
                children[key.get_unchecked(common) as usize] =
                    Slot::new(Node::Leaf { key: key.slice(common + 1..), value });
                under_prefix(key.slice(..common), Node::Branch { children })
            }
        }
        Node::Branch { mut children } => {
            insert(&mut children[key.get_unchecked(0) as usize], key.slice(1..), value);
            Node::Branch { children }
        }
    };
}

/// The reference a parent holds to `slot`'s node, computed only where something changed.
fn reference(slot: &mut Slot, buf: &mut Vec<u8>) -> Option<RlpNode> {
    if let Some(r) = &slot.rlp {
        return Some(r.clone());
    }
    let r = match &mut slot.node {
        Node::Empty => return None,
        Node::Leaf { key, value } => encode_leaf(key, value, buf),
        Node::Extension { key, child } => {
            let child = reference(child, buf).expect("an extension always has a child");
            encode_extension(key, &child, buf)
        }
        Node::Branch { children } => {
            let mut stack = Vec::with_capacity(16);
            let mut mask = TrieMask::default();
            for (i, child) in children.iter_mut().enumerate() {
                if let Some(r) = reference(child, buf) {
                    mask.set_bit(i as u8);
                    stack.push(r);
                }
            }
            encode_branch(&stack, mask, buf)
        }
    };
    slot.rlp = Some(r.clone());
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_trie::root::ordered_trie_root_encoded;

    fn item(i: usize) -> Bytes {
        // Short and long values: leaves inlined in their parent and leaves referenced by hash.
        let len = if i.is_multiple_of(3) { 3 } else { 40 + i % 50 };
        Bytes::from((0..len).map(|j| (i * 31 + j) as u8).collect::<Vec<u8>>())
    }

    #[test]
    fn root_after_every_batch_equals_the_root_over_all_leaves() {
        let mut trie = OrderedTrie::default();
        let mut all: Vec<Bytes> = Vec::new();
        assert_eq!(trie.root(), EMPTY_ROOT_HASH);
        // Batches of varying size across the rlp key classes: 1..127, 0, 128..255, 256+.
        let mut n = 0usize;
        for batch in [1, 1, 2, 5, 13, 100, 7, 1, 127, 3, 300, 1, 64, 1000, 17] {
            for _ in 0..batch {
                let v = item(n);
                trie.push(v.clone());
                all.push(v);
                n += 1;
            }
            assert_eq!(trie.root(), ordered_trie_root_encoded(&all), "after {n} items");
        }
        assert_eq!(trie.len(), n);
    }

    #[test]
    fn root_after_each_single_append_equals_the_root_over_all_leaves() {
        let mut trie = OrderedTrie::default();
        let mut all: Vec<Bytes> = Vec::new();
        for i in 0..600 {
            let v = item(i);
            trie.push(v.clone());
            all.push(v);
            assert_eq!(trie.root(), ordered_trie_root_encoded(&all), "after {} items", i + 1);
        }
    }
}

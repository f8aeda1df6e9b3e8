//! The transactions and receipts tries of a block being built: keys `rlp(index)`, values
//! appended in order and never changed. Every pre-confirmation publishes a header with both
//! roots, so the builder asks for them at every tick while the block grows, and
//! recomputing them from all leaves would make a tick's cost grow with the block. This trie
//! keeps each node's reference between root computations and rehashes only the
//! nodes on the paths of the leaves appended since: O(new leaves × depth) per root.

use alloy_primitives::{Bytes, B256};
use alloy_trie::Nibbles;

use crate::mpt::MemoryTrie;

/// An append-only ordered trie whose root costs only what was appended since the last one:
/// the state trie's insert and hashing (`mpt`), on a trie with nothing stored.
#[derive(Default)]
pub struct OrderedTrie {
    trie: MemoryTrie,
    len: usize,
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
        self.trie.insert(key, value.to_vec());
        self.len += 1;
    }

    /// The root over every item appended so far.
    pub fn root(&mut self) -> B256 {
        self.trie.root()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_trie::root::ordered_trie_root_encoded;
    use alloy_trie::EMPTY_ROOT_HASH;

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

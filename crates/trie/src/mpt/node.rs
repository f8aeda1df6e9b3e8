//! The in-memory form of the part of a trie that one computation touches. Nodes not
//! loaded yet stay references (`Link::Stored`) and are read by path on first use.

use alloy_primitives::Bytes;
use alloy_rlp::Decodable;
use alloy_trie::nodes::{BranchNodeRef, ExtensionNodeRef, LeafNodeRef, RlpNode, TrieNode};
use alloy_trie::{Nibbles, TrieMask};

use crate::error::{Owner, TrieError, TrieResult};

/// A child position of the trie.
#[derive(Default)]
pub(crate) enum Link {
    #[default]
    Empty,
    /// Not loaded: the reference the parent holds (a hash, or the inline RLP of a node
    /// shorter than 32 bytes).
    Stored(RlpNode),
    Loaded(Box<Entry>),
}

pub(crate) struct Entry {
    pub node: Node,
    /// Changed in this computation: must be re-hashed and written at its path.
    pub dirty: bool,
    /// The reference a parent holds for it, while it is unchanged.
    pub rlp: Option<RlpNode>,
}

pub(crate) enum Node {
    /// `key`: the rest of the full key after this node's path.
    Leaf {
        key: Nibbles,
        value: Vec<u8>,
    },
    /// The child sits at `path + key`.
    Extension {
        key: Nibbles,
        child: Link,
    },
    Branch {
        children: Box<[Link; 16]>,
    },
}

impl Node {
    /// A throwaway value to move a node out of its entry.
    pub fn placeholder() -> Self {
        Node::Leaf { key: Nibbles::new(), value: Vec::new() }
    }
}

impl Link {
    pub fn dirty(node: Node) -> Self {
        Link::Loaded(Box::new(Entry { node, dirty: true, rlp: None }))
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, Link::Empty)
    }
}

pub(crate) fn empty_children() -> Box<[Link; 16]> {
    Box::default()
}

/// Decodes a stored node into its in-memory form; children become `Link::Stored`.
pub(crate) fn decode(bytes: &[u8], owner: Owner, path: &Nibbles) -> TrieResult<Node> {
    let corrupt = |reason: String| TrieError::CorruptNode { owner, path: *path, reason };
    let node = TrieNode::decode(&mut &bytes[..]).map_err(|e| corrupt(e.to_string()))?;
    Ok(match node {
        TrieNode::Leaf(leaf) => Node::Leaf { key: leaf.key, value: leaf.value },
        TrieNode::Extension(ext) => Node::Extension { key: ext.key, child: Link::Stored(ext.child) },
        TrieNode::Branch(branch) => {
            let mut children = empty_children();
            let mut stack = branch.stack.into_iter();
            for nibble in branch.state_mask.iter() {
                let child = stack.next().ok_or_else(|| corrupt("branch mask and stack differ".into()))?;
                children[nibble as usize] = Link::Stored(child);
            }
            Node::Branch { children }
        }
        TrieNode::EmptyRoot => return Err(corrupt("empty node stored at a path".into())),
    })
}

/// Reads the node behind a reference: a hash is looked up by path, inline RLP is the node.
pub(crate) fn load_ref(
    reference: &RlpNode,
    path: &Nibbles,
    owner: Owner,
    load: impl FnOnce(&Nibbles) -> TrieResult<Option<Bytes>>,
) -> TrieResult<Bytes> {
    if reference.is_hash() {
        let bytes = load(path)?.ok_or(TrieError::MissingNode { owner, path: *path })?;
        debug_assert_eq!(RlpNode::from_rlp(&bytes), *reference, "node at {path:?} does not match its parent");
        Ok(bytes)
    } else {
        Ok(Bytes::copy_from_slice(reference))
    }
}

/// RLP-encodes a node whose children are already references; `buf` receives the encoding.
pub(crate) fn encode_leaf(key: &Nibbles, value: &[u8], buf: &mut Vec<u8>) -> RlpNode {
    buf.clear();
    LeafNodeRef::new(key, value).rlp(buf)
}

pub(crate) fn encode_extension(key: &Nibbles, child: &RlpNode, buf: &mut Vec<u8>) -> RlpNode {
    buf.clear();
    ExtensionNodeRef::new(key, child).rlp(buf)
}

pub(crate) fn encode_branch(stack: &[RlpNode], mask: TrieMask, buf: &mut Vec<u8>) -> RlpNode {
    buf.clear();
    BranchNodeRef::new(stack, mask).rlp(buf)
}

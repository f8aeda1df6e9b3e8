//! One Merkle-Patricia trie being updated: loads only the nodes on the paths of the keys
//! it touches, then re-hashes the changed nodes bottom-up and reports them as a diff.

pub(crate) mod node;
mod update;

use std::mem;

use alloy_primitives::{keccak256, Bytes, B256};
use alloy_trie::nodes::RlpNode;
use alloy_trie::{Nibbles, TrieMask, EMPTY_ROOT_HASH};

use crate::diff::NodeDiff;
use crate::error::TrieResult;
use crate::reader::{NodeReader, TrieSource};
pub(crate) use node::decode as decode_node;
use node::{decode, encode_branch, encode_extension, encode_leaf, load_ref, Entry, Node};
pub(crate) use node::{Link, Node as DecodedNode};
use update::{child_path, Ctx};

pub(crate) struct Trie<'r, R: ?Sized> {
    root: Link,
    ctx: Ctx<'r, R>,
}

impl<'r, R: NodeReader + ?Sized> Trie<'r, R> {
    /// The trie as the reader has it (`owner`: `None` for the account trie).
    pub fn open(reader: &'r R, owner: Option<B256>) -> TrieResult<Self> {
        let ctx = Ctx { source: TrieSource { reader, owner }, vacated: Vec::new() };
        let root_path = Nibbles::new();
        let root = match ctx.source.load(&root_path)? {
            None => Link::Empty,
            Some(bytes) => Link::Loaded(Box::new(Entry {
                node: decode(&bytes, owner, &root_path)?,
                dirty: false,
                rlp: Some(RlpNode::from_rlp(&bytes)),
            })),
        };
        Ok(Self { root, ctx })
    }

    /// An empty trie replacing the one the reader has: every stored node is removed.
    /// Costs one read per node of the old trie.
    pub fn wiped(reader: &'r R, owner: Option<B256>) -> TrieResult<Self> {
        let mut ctx = Ctx { source: TrieSource { reader, owner }, vacated: Vec::new() };
        let root_path = Nibbles::new();
        if let Some(bytes) = ctx.source.load(&root_path)? {
            vacate_all(&mut ctx, &bytes, root_path)?;
        }
        Ok(Self { root: Link::Empty, ctx })
    }

    /// A trie whose root (and whatever is loaded below it) was read earlier from the same
    /// reader and left unchanged (`into_root`).
    pub fn with_root(reader: &'r R, owner: Option<B256>, root: Link) -> Self {
        Self { root, ctx: Ctx { source: TrieSource { reader, owner }, vacated: Vec::new() } }
    }

    /// The loaded root of an unchanged or committed trie, to be resumed with `with_root`.
    pub fn into_root(self) -> Link {
        debug_assert!(self.ctx.vacated.is_empty(), "removals not committed would be lost");
        self.root
    }

    pub fn get(&mut self, key: &B256) -> TrieResult<Option<Vec<u8>>> {
        let key = Nibbles::unpack(key);
        let mut link = &mut self.root;
        let mut path = Nibbles::new();
        loop {
            if matches!(link, Link::Stored(_)) {
                *link = self.ctx.resolve(mem::take(link), &path)?;
            }
            let Link::Loaded(entry) = link else {
                return Ok(None);
            };
            let rest = key.slice(path.len()..);
            match &mut entry.node {
                Node::Leaf { key: leaf_key, value } => {
                    return Ok((*leaf_key == rest).then(|| value.clone()));
                }
                Node::Extension { key: ext_key, child } => {
                    if !rest.starts_with(ext_key) {
                        return Ok(None);
                    }
                    path = path.join(ext_key);
                    link = child;
                }
                Node::Branch { children } => {
                    let n = rest.get_unchecked(0) as usize;
                    path = child_path(&path, n);
                    link = &mut children[n];
                }
            }
        }
    }

    pub fn insert(&mut self, key: &B256, value: Vec<u8>) -> TrieResult<()> {
        let root = mem::take(&mut self.root);
        self.root = self.ctx.insert(root, Nibbles::new(), Nibbles::unpack(key), value)?.0;
        Ok(())
    }

    pub fn remove(&mut self, key: &B256) -> TrieResult<()> {
        let root = mem::take(&mut self.root);
        self.root = self.ctx.remove(root, Nibbles::new(), Nibbles::unpack(key))?.0;
        Ok(())
    }

    /// The new root and the node changes since the last commit: every changed node at its
    /// path, and a removal for every path that lost its node. The trie stays usable.
    pub fn commit(&mut self) -> (B256, NodeDiff) {
        let mut out: NodeDiff = self.ctx.vacated.drain(..).map(|p| (p, None)).collect();
        let mut buf = Vec::with_capacity(600);
        let root = root_hash(hash_link(&mut self.root, Nibbles::new(), &mut Some(&mut out), &mut buf));
        (root, out)
    }
}

/// The root's hash from the reference its parent would hold.
fn root_hash(reference: Option<RlpNode>) -> B256 {
    match reference {
        None => EMPTY_ROOT_HASH,
        // The root is always referenced by hash, even when its RLP is short.
        Some(r) => r.as_hash().unwrap_or_else(|| keccak256(r.as_slice())),
    }
}

/// Hashes a subtree bottom-up where it changed, keeping each node's reference for the next
/// time; writes the changed nodes to `out` when given. Returns the reference its parent holds.
fn hash_link(link: &mut Link, path: Nibbles, out: &mut Option<&mut NodeDiff>, buf: &mut Vec<u8>) -> Option<RlpNode> {
    let entry = match link {
        Link::Empty => return None,
        Link::Stored(reference) => return Some(reference.clone()),
        Link::Loaded(entry) => entry,
    };
    let dirty = entry.dirty;
    if let (false, Some(reference)) = (dirty, &entry.rlp) {
        return Some(reference.clone());
    }
    let reference = match &mut entry.node {
        Node::Leaf { key, value } => encode_leaf(key, value, buf),
        Node::Extension { key, child } => {
            let child = hash_link(child, path.join(key), out, buf).expect("an extension always has a child");
            encode_extension(key, &child, buf)
        }
        Node::Branch { children } => {
            let mut stack = Vec::with_capacity(16);
            let mut mask = TrieMask::default();
            for (i, child) in children.iter_mut().enumerate() {
                if let Some(r) = hash_link(child, child_path(&path, i), out, buf) {
                    stack.push(r);
                    mask.set_bit(i as u8);
                }
            }
            encode_branch(&stack, mask, buf)
        }
    };
    if let (true, Some(out)) = (dirty, out) {
        out.insert(path, Some(Bytes::copy_from_slice(buf)));
    }
    entry.dirty = false;
    entry.rlp = Some(reference.clone());
    Some(reference)
}

/// A trie with nothing stored below it, kept in memory between roots (`OrderedTrie`): the
/// same insert as `Trie`, and a root that re-hashes only the paths changed since the last.
#[derive(Default)]
pub(crate) struct MemoryTrie {
    root: Link,
    buf: Vec<u8>,
}

/// The reader of a `MemoryTrie`: it never has a stored reference to resolve.
struct NothingStored;

impl NodeReader for NothingStored {
    fn account_node(&self, _: &Nibbles) -> TrieResult<Option<Bytes>> {
        Ok(None)
    }
    fn storage_node(&self, _: &B256, _: &Nibbles) -> TrieResult<Option<Bytes>> {
        Ok(None)
    }
}

impl MemoryTrie {
    /// Sets `key` (any length; keys must be prefix-free) to `value`.
    pub fn insert(&mut self, key: Nibbles, value: Vec<u8>) {
        let mut ctx = Ctx { source: TrieSource { reader: &NothingStored, owner: None }, vacated: Vec::new() };
        let root = mem::take(&mut self.root);
        // Only stored nodes are read, and this trie has none: nothing can fail.
        self.root = ctx.insert(root, Nibbles::new(), key, value).expect("an in-memory trie reads nothing").0;
    }

    pub fn root(&mut self) -> B256 {
        root_hash(hash_link(&mut self.root, Nibbles::new(), &mut None, &mut self.buf))
    }
}

/// Records every node of a stored subtree (inline ones too: they have their own path).
fn vacate_all<R: NodeReader + ?Sized>(ctx: &mut Ctx<'_, R>, bytes: &[u8], path: Nibbles) -> TrieResult<()> {
    ctx.vacated.push(path);
    let owner = ctx.source.owner;
    let visit = |ctx: &mut Ctx<'_, R>, reference: &RlpNode, at: Nibbles| {
        let child = load_ref(reference, &at, owner, |p| ctx.source.load(p))?;
        vacate_all(ctx, &child, at)
    };
    match decode(bytes, owner, &path)? {
        Node::Leaf { .. } => {}
        Node::Extension { key, child: Link::Stored(r) } => visit(ctx, &r, path.join(&key))?,
        Node::Extension { .. } => {}
        Node::Branch { children } => {
            for (i, child) in children.iter().enumerate() {
                if let Link::Stored(r) = child {
                    visit(ctx, r, child_path(&path, i))?;
                }
            }
        }
    }
    Ok(())
}

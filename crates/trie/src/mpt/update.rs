//! Inserting and removing one key in the in-memory trie, loading nodes on the way.
//!
//! Nodes keep their absolute path: a branch never moves. Leaves and extensions move when
//! the structure above them changes (a split pushes them down, a collapse pulls them up),
//! and then they are rewritten anyway because their key changed. Every path that loses
//! its node is recorded in `vacated`, so the diff removes it unless a node is written
//! there again.

use std::mem;

use alloy_trie::Nibbles;

use super::node::{decode, empty_children, load_ref, Entry, Link, Node};
use crate::error::TrieResult;
use crate::reader::{NodeReader, TrieSource};

pub(crate) struct Ctx<'r, R: ?Sized> {
    pub source: TrieSource<'r, R>,
    pub vacated: Vec<Nibbles>,
}

pub(crate) fn child_path(path: &Nibbles, nibble: usize) -> Nibbles {
    let mut p = *path;
    p.push_unchecked(nibble as u8);
    p
}

/// `prefix` above `branch`: the branch itself when the prefix is empty.
fn under_prefix(prefix: Nibbles, branch: Node) -> Node {
    if prefix.is_empty() {
        branch
    } else {
        Node::Extension { key: prefix, child: Link::dirty(branch) }
    }
}

impl<R: NodeReader + ?Sized> Ctx<'_, R> {
    /// Turns a stored reference into a loaded node.
    pub fn resolve(&self, link: Link, path: &Nibbles) -> TrieResult<Link> {
        let Link::Stored(reference) = link else {
            return Ok(link);
        };
        let bytes = load_ref(&reference, path, self.source.owner, |p| self.source.load(p))?;
        let node = decode(&bytes, self.source.owner, path)?;
        Ok(Link::Loaded(Box::new(Entry { node, dirty: false, rlp: Some(reference) })))
    }

    /// Sets `key` (the rest of the full key below `path`) to `value`.
    pub fn insert(&mut self, link: Link, path: Nibbles, key: Nibbles, value: Vec<u8>) -> TrieResult<(Link, bool)> {
        let mut entry = match self.resolve(link, &path)? {
            Link::Loaded(entry) => entry,
            _ => return Ok((Link::dirty(Node::Leaf { key, value }), true)),
        };
        let (node, changed) = match mem::replace(&mut entry.node, Node::placeholder()) {
            Node::Leaf { key: old_key, value: old_value } if old_key == key => {
                let changed = old_value != value;
                (Node::Leaf { key, value }, changed)
            }
            Node::Leaf { key: old_key, value: old_value } => {
                // Keys are prefix-free (state keys have one length, ordered keys are
                // rlp(index)), so they differ before either ends.
                let common = old_key.common_prefix_length(&key);
                let mut children = empty_children();
                children[old_key.get_unchecked(common) as usize] =
                    Link::dirty(Node::Leaf { key: old_key.slice(common + 1..), value: old_value });
                children[key.get_unchecked(common) as usize] =
                    Link::dirty(Node::Leaf { key: key.slice(common + 1..), value });
                (under_prefix(key.slice(..common), Node::Branch { children }), true)
            }
            Node::Extension { key: ext_key, child } => {
                let common = ext_key.common_prefix_length(&key);
                if common == ext_key.len() {
                    let child_at = path.join(&ext_key);
                    let (child, changed) = self.insert(child, child_at, key.slice(common..), value)?;
                    (Node::Extension { key: ext_key, child }, changed)
                } else {
                    // Split: a branch where the keys part; the extension's child keeps its path.
                    let mut children = empty_children();
                    children[ext_key.get_unchecked(common) as usize] = if common + 1 < ext_key.len() {
                        Link::dirty(Node::Extension { key: ext_key.slice(common + 1..), child })
                    } else {
                        child
                    };
                    children[key.get_unchecked(common) as usize] =
                        Link::dirty(Node::Leaf { key: key.slice(common + 1..), value });
                    (under_prefix(key.slice(..common), Node::Branch { children }), true)
                }
            }
            Node::Branch { mut children } => {
                let n = key.get_unchecked(0) as usize;
                let child = mem::take(&mut children[n]);
                let (child, changed) = self.insert(child, child_path(&path, n), key.slice(1..), value)?;
                children[n] = child;
                (Node::Branch { children }, changed)
            }
        };
        entry.node = node;
        if changed {
            entry.dirty = true;
            entry.rlp = None;
        }
        Ok((Link::Loaded(entry), changed))
    }

    /// Removes `key` (the rest of the full key below `path`), collapsing what is left.
    pub fn remove(&mut self, link: Link, path: Nibbles, key: Nibbles) -> TrieResult<(Link, bool)> {
        let mut entry = match self.resolve(link, &path)? {
            Link::Loaded(entry) => entry,
            other => return Ok((other, false)),
        };
        let (node, changed) = match mem::replace(&mut entry.node, Node::placeholder()) {
            Node::Leaf { key: leaf_key, .. } if leaf_key == key => (None, true),
            Node::Extension { key: ext_key, child } if key.starts_with(&ext_key) => {
                let child_at = path.join(&ext_key);
                let (child, changed) = self.remove(child, child_at, key.slice(ext_key.len()..))?;
                if changed {
                    (self.absorb(ext_key, child, child_at)?, true)
                } else {
                    (Some(Node::Extension { key: ext_key, child }), false)
                }
            }
            Node::Branch { mut children } => {
                let n = key.get_unchecked(0) as usize;
                let child = mem::take(&mut children[n]);
                let (child, changed) = self.remove(child, child_path(&path, n), key.slice(1..))?;
                children[n] = child;
                if changed {
                    (self.collapse(children, &path)?, true)
                } else {
                    (Some(Node::Branch { children }), false)
                }
            }
            unchanged => (Some(unchanged), false),
        };
        match node {
            None => {
                self.vacated.push(path);
                Ok((Link::Empty, true))
            }
            Some(node) => {
                entry.node = node;
                if changed {
                    entry.dirty = true;
                    entry.rlp = None;
                }
                Ok((Link::Loaded(entry), changed))
            }
        }
    }

    /// A branch after a removal: still a branch with two or more children, or its only
    /// child pulled up to the branch's path.
    fn collapse(&mut self, mut children: Box<[Link; 16]>, path: &Nibbles) -> TrieResult<Option<Node>> {
        let mut live = children.iter().enumerate().filter(|(_, c)| !c.is_empty()).map(|(i, _)| i);
        let (first, second) = (live.next(), live.next());
        match (first, second) {
            (None, _) => Ok(None),
            (Some(_), Some(_)) => Ok(Some(Node::Branch { children })),
            (Some(only), None) => {
                let child = mem::take(&mut children[only]);
                let prefix = Nibbles::from_nibbles_unchecked([only as u8]);
                self.absorb(prefix, child, child_path(path, only))
            }
        }
    }

    /// The node that replaces `prefix -> child` (an extension, or a collapsed branch's
    /// single child): leaves and extensions merge their key into the prefix and leave
    /// `child_at`; a branch stays where it is under an extension.
    fn absorb(&mut self, prefix: Nibbles, child: Link, child_at: Nibbles) -> TrieResult<Option<Node>> {
        let entry = match self.resolve(child, &child_at)? {
            Link::Loaded(entry) => entry,
            _ => return Ok(None),
        };
        let Entry { node, dirty, rlp } = *entry;
        Ok(Some(match node {
            Node::Leaf { key, value } => {
                self.vacated.push(child_at);
                Node::Leaf { key: prefix.join(&key), value }
            }
            Node::Extension { key, child } => {
                self.vacated.push(child_at);
                Node::Extension { key: prefix.join(&key), child }
            }
            branch @ Node::Branch { .. } => {
                Node::Extension { key: prefix, child: Link::Loaded(Box::new(Entry { node: branch, dirty, rlp })) }
            }
        }))
    }
}

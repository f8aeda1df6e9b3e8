//! Byte layouts of the node tables' keys.
//!
//! A node key is `[owner (32, storage tries only)] | packed path (32) | path length (1) |
//! block (8, big-endian)`. Fixed width and big-endian, so all versions of one path sort
//! together in block order and "the node at path P as of block N" is the last key
//! `<= (P, N)`.

use alloy_primitives::B256;
use alloy_trie::Nibbles;

pub(crate) const PATH_LEN: usize = 33;
pub(crate) const ACCOUNT_KEY_LEN: usize = PATH_LEN + 8;
pub(crate) const STORAGE_KEY_LEN: usize = 32 + PATH_LEN + 8;

/// Tags in prune-queue keys saying which node table an entry belongs to.
pub(crate) const TAG_ACCOUNT: u8 = 0;
pub(crate) const TAG_STORAGE: u8 = 1;

fn put_path(out: &mut [u8], path: &Nibbles) {
    path.pack_to(&mut out[..32]);
    out[32] = path.len() as u8;
}

pub(crate) fn account_key(path: &Nibbles, block: u64) -> [u8; ACCOUNT_KEY_LEN] {
    let mut k = [0u8; ACCOUNT_KEY_LEN];
    put_path(&mut k, path);
    k[PATH_LEN..].copy_from_slice(&block.to_be_bytes());
    k
}

pub(crate) fn storage_key(owner: &B256, path: &Nibbles, block: u64) -> [u8; STORAGE_KEY_LEN] {
    let mut k = [0u8; STORAGE_KEY_LEN];
    k[..32].copy_from_slice(owner.as_slice());
    put_path(&mut k[32..], path);
    k[32 + PATH_LEN..].copy_from_slice(&block.to_be_bytes());
    k
}

/// The block of a node key (its last 8 bytes).
pub(crate) fn key_block(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&key[key.len() - 8..]);
    u64::from_be_bytes(b)
}

#[cfg(test)]
/// The path of a node key without owner: packed path and length.
pub(crate) fn key_path(path_bytes: &[u8]) -> Nibbles {
    let len = path_bytes[32] as usize;
    Nibbles::unpack(&path_bytes[..32]).slice(..len)
}

/// Prune-queue key: `superseding block (8) | tag (1) | node key`. Sorted by the block
/// that made the node version obsolete, so pruning reads only a prefix of the queue.
pub(crate) fn queue_key(block: u64, tag: u8, node_key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(9 + node_key.len());
    k.extend_from_slice(&block.to_be_bytes());
    k.push(tag);
    k.extend_from_slice(node_key);
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_by_path_then_length_then_block() {
        let p = |s: &[u8]| Nibbles::from_nibbles(s);
        let mut keys = [
            account_key(&p(&[0xa, 0xb]), 7),
            account_key(&p(&[0xa]), 9),
            account_key(&p(&[0xa, 0xb]), 3),
            account_key(&p(&[0xa, 0xb, 0x0]), 1),
            account_key(&p(&[]), 5),
            account_key(&p(&[0xa, 0xc]), 0),
        ];
        keys.sort();
        let decoded: Vec<(Nibbles, u64)> = keys.iter().map(|k| (key_path(&k[..PATH_LEN]), key_block(k))).collect();
        assert_eq!(
            decoded,
            vec![
                (p(&[]), 5),
                (p(&[0xa]), 9),
                (p(&[0xa, 0xb]), 3),
                (p(&[0xa, 0xb]), 7),
                (p(&[0xa, 0xb, 0x0]), 1),
                (p(&[0xa, 0xc]), 0),
            ]
        );
    }

    #[test]
    fn full_length_paths_round_trip() {
        let owner = B256::repeat_byte(0x11);
        let path = Nibbles::unpack(B256::repeat_byte(0xfe));
        let k = storage_key(&owner, &path, u64::MAX - 1);
        assert_eq!(&k[..32], owner.as_slice());
        assert_eq!(key_path(&k[32..32 + PATH_LEN]), path);
        assert_eq!(key_block(&k), u64::MAX - 1);
    }
}

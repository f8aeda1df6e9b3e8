//! The whole chain imports: head 54 with the hash the upstream fork choice names.

use super::{kit, support};

const HEAD_HASH: &str = "0xd226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7";

#[test]
fn imports_all_54_blocks() {
    let dir = support::TempDir::new("chain");
    let (store, genesis) = support::open(&dir);
    let (result, reports) = support::import(&store, &genesis, support::file_blocks());
    let done = result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((done.head, done.imported, done.skipped, done.transactions), (54, 54, 0, 249));
    let snapshot = store.snapshot().unwrap();
    assert_eq!(snapshot.head(), Some(54));
    assert_eq!(snapshot.block_hash(54).unwrap().unwrap().to_string(), HEAD_HASH);
    assert!(!reports.is_empty());
    let _ = kit::txinfo;
}

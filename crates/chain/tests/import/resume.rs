//! An import that stopped part-way resumes after the store's head; blocks the store holds
//! are checked, not executed again; a file from another chain or with a gap is refused.

use preconf_chain::import::ImportError;

use super::chain::HEAD_HASH;
use super::{kit, support};

#[test]
fn an_interrupted_import_resumes_after_the_stored_head() {
    let dir = support::TempDir::new("resume");
    {
        let (store, genesis) = support::open(&dir);
        let first: Vec<_> = support::file_blocks().into_iter().take(20).collect();
        let done = support::import(&store, &genesis, first).0.unwrap();
        assert_eq!((done.head, done.imported), (20, 20));
    }
    // A new process: the store reopened from disk, the whole file again.
    let (store, genesis) = support::open(&dir);
    assert_eq!(store.head().unwrap(), Some(20));
    let (result, reports) = support::import(&store, &genesis, support::file_blocks());
    let done = result.unwrap();
    assert_eq!((done.head, done.imported, done.skipped), (54, 34, 20));
    assert_eq!(reports.first().map(|r| r.head), Some(21), "the first block executed is 21");
    assert_eq!(store.snapshot().unwrap().block_hash(54).unwrap().unwrap().to_string(), HEAD_HASH);
}

#[test]
fn a_file_of_another_chain_is_refused_at_the_first_differing_block() {
    let dir = support::TempDir::new("conflict");
    let (store, genesis) = support::open(&dir);
    let first: Vec<_> = support::file_blocks().into_iter().take(12).collect();
    support::import(&store, &genesis, first).0.unwrap();
    let mut blocks = kit::blocks();
    blocks[9].header.extra_data = b"another chain".to_vec().into();
    let e = support::import(&store, &genesis, support::as_file(blocks)).0.unwrap_err();
    match e {
        ImportError::Conflict { number, stored, file } => {
            assert_eq!(number, 10);
            assert_ne!(stored, file);
        }
        other => panic!("expected a conflict, got {other}"),
    }
    assert_eq!(store.head().unwrap(), Some(12), "nothing was written");
}

#[test]
fn a_gap_after_the_head_is_refused() {
    let dir = support::TempDir::new("gap");
    let (store, genesis) = support::open(&dir);
    let blocks = support::file_blocks();
    let (first, rest): (Vec<_>, Vec<_>) = blocks.into_iter().enumerate().partition(|(i, _)| *i < 5);
    support::import(&store, &genesis, first.into_iter().map(|(_, b)| b).collect()).0.unwrap();
    let later: Vec<_> = rest.into_iter().skip(2).map(|(_, b)| b).collect(); // starts at block 8
    let e = support::import(&store, &genesis, later).0.unwrap_err();
    assert!(matches!(e, ImportError::Gap { number: 8, head: 5 }), "{e}");
    assert_eq!(e.to_string(), "block 8: the store's head is block 5, so the next block must be 6: blocks are missing");
}

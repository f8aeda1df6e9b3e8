//! The messages of a block rendered version by version, read back by the decoder a
//! follower uses: the transactions and the header they put together are the block's.

use std::sync::Arc;

use alloy_consensus::constants::EMPTY_OMMER_ROOT_HASH;
use alloy_consensus::{Header, Receipt, Signed, TxEnvelope, TxLegacy, EMPTY_ROOT_HASH};
use alloy_primitives::{Address, Bloom, Signature, B256, U256};
use preconf_chain::changes::{AccountChange, AccountState};
use preconf_chain::types::{BlockData, ExecutedTx, TxList};
use preconf_flashblocks::{decode, HeaderShape, Sequence};

use super::*;

fn transfer(i: u64) -> Arc<ExecutedTx> {
    let tx = TxLegacy { nonce: i, gas_limit: 21_000, input: vec![0; i as usize % 7].into(), ..Default::default() };
    let tx = TxEnvelope::Legacy(Signed::new_unchecked(tx, Signature::test_signature(), B256::from(U256::from(i + 1))));
    let receipt = Receipt { status: true.into(), cumulative_gas_used: 21_000 * (i + 1), logs: vec![] };
    Arc::new(ExecutedTx::eth(tx, Address::with_last_byte(1), receipt, 21_000))
}

/// A version of block 9 with `txs`, its header shaped as an Ecotone-to-Holocene OP
/// block's (the builder's `current_header`: roots over the transactions so far).
fn version(txs: &TxList, index: u64) -> BlockData {
    let encodings: Vec<Vec<u8>> = txs.iter().map(|t| t.tx.encoded_2718()).collect();
    let header = Header {
        parent_hash: B256::repeat_byte(0x11),
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: Address::repeat_byte(0x22),
        transactions_root: alloy_trie::root::ordered_trie_root_with_encoder(&encodings, |t, b| b.extend_from_slice(t)),
        receipts_root: B256::with_last_byte(index as u8 + 1),
        logs_bloom: Bloom::repeat_byte(index as u8),
        number: 9,
        gas_limit: 30_000_000,
        gas_used: 21_000 * txs.len() as u64,
        timestamp: 1_800_000_000,
        extra_data: vec![0, 0, 0, 0, 250, 0, 0, 0, 6].into(),
        mix_hash: B256::repeat_byte(0x33),
        base_fee_per_gas: Some(1_000_000),
        withdrawals_root: Some(EMPTY_ROOT_HASH),
        blob_gas_used: Some(0),
        excess_blob_gas: Some(0),
        parent_beacon_block_root: Some(B256::repeat_byte(0x44)),
        ..Default::default()
    };
    BlockData { header, txs: txs.clone(), preconf_index: Some(index), ..Default::default() }
}

fn balance_change(who: u8, balance: u64) -> StateChanges {
    let mut changes = StateChanges::default();
    let info = AccountState { nonce: 1, balance: U256::from(balance), code_hash: alloy_primitives::KECCAK256_EMPTY };
    changes.accounts.insert(Address::with_last_byte(who), AccountChange { info: Some(info), ..Default::default() });
    changes
}

const SHAPE: HeaderShape = HeaderShape { canyon: true, ecotone: true, isthmus: false };

#[test]
fn a_followers_sequence_of_the_messages_is_the_block() {
    let mut stream = FlashblockStream::default();
    let mut txs = TxList::from(vec![transfer(0)]);
    let first = decode(
        stream.opened(&version(&txs, 0), &balance_change(1, 5), Some(B256::with_last_byte(0xa0)), false).as_bytes(),
    )
    .unwrap();
    let base = first.base.clone().expect("index 0 carries the base");
    assert_eq!(
        (first.index, base.block_number, base.gas_limit, base.base_fee_per_gas),
        (0, 9, 30_000_000, U256::from(1_000_000))
    );
    assert_eq!(first.payload_id, standalone_payload_id(&version(&txs, 0).header));
    assert_eq!(first.metadata.new_account_balances[&Address::with_last_byte(1)], U256::from(5));
    let mut sequence = Sequence::start(first).unwrap();
    let mut n = 1;
    for index in 1..8u64 {
        let added: Vec<_> = (n..n + index % 3).map(transfer).collect(); // some ticks add nothing
        n += added.len() as u64;
        txs = txs.appended(&added);
        let block = version(&txs, index);
        let root = B256::with_last_byte(0xa0 + index as u8);
        let text = stream.preconfirmed(&block, &balance_change(2, index), Some(root)).unwrap();
        let m = decode(text.as_bytes()).unwrap();
        assert_eq!((m.index, m.base.is_none(), m.metadata.block_number), (index, true, 9));
        assert_eq!(m.diff.transactions.len(), added.len(), "only what this pre-confirmation added");
        let hashes: Vec<B256> = added.iter().map(|t| t.hash()).collect();
        assert_eq!(m.metadata.receipts.keys().copied().collect::<Vec<_>>(), {
            let mut h = hashes;
            h.sort();
            h
        });
        assert!(sequence.push(m).unwrap());
        // Everything so far, and the header the block has with that state root.
        let all: Vec<_> = txs.iter().map(|t| alloy_primitives::Bytes::from(t.tx.encoded_2718())).collect();
        assert_eq!(sequence.transactions, all);
        let mut expected = block.header.clone();
        expected.state_root = root;
        assert_eq!(sequence.header(SHAPE), expected);
        assert_eq!(sequence.block_hash(), Some(expected.hash_slow()));
    }
}

#[test]
fn without_roots_the_state_root_and_hash_are_zero() {
    let mut stream = FlashblockStream::default();
    let txs = TxList::from(vec![transfer(0)]);
    let m = decode(stream.opened(&version(&txs, 0), &StateChanges::default(), None, false).as_bytes()).unwrap();
    assert!(m.diff.state_root.is_zero() && m.diff.block_hash.is_zero());
    assert_eq!(Sequence::start(m).unwrap().block_hash(), None);
}

#[test]
fn a_block_not_seen_open_or_gone_another_way_is_not_continued() {
    let mut stream = FlashblockStream::default();
    let txs = TxList::from(vec![transfer(0), transfer(1)]);
    // Started mid-block: nothing until a block opens.
    assert_eq!(stream.preconfirmed(&version(&txs, 3), &StateChanges::default(), None), None);
    stream.opened(&version(&txs, 0), &StateChanges::default(), None, false);
    // Rewound to another branch of the same block.
    let other = TxList::from(vec![transfer(0), transfer(5)]);
    assert_eq!(stream.preconfirmed(&version(&other, 1), &StateChanges::default(), None), None);
    assert!(!stream.is_open());
}

#[test]
fn jovian_diffs_carry_the_da_footprint() {
    let mut stream = FlashblockStream::default();
    let txs = TxList::from(vec![transfer(0)]);
    let mut block = version(&txs, 0);
    block.header.blob_gas_used = Some(40_000);
    let m = decode(stream.opened(&block, &StateChanges::default(), None, true).as_bytes()).unwrap();
    assert_eq!(m.diff.blob_gas_used, Some(40_000));
}

#[test]
fn a_payload_started_mid_block_is_a_new_payload_of_that_block() {
    let mut stream = FlashblockStream::default();
    let txs = TxList::from(vec![transfer(0), transfer(1), transfer(2)]);
    // Taken up at the block's pre-confirmation 3 (a new leader, a late replica): index 0
    // with the base and every transaction so far, under the id of "this block from 3".
    let block = version(&txs, 3);
    let first = decode(stream.opened(&block, &balance_change(1, 5), None, false).as_bytes()).unwrap();
    assert_eq!((first.index, first.base.is_some(), first.diff.transactions.len()), (0, true, 3));
    assert_eq!(first.payload_id, payload_id_from(&block.header, 3));
    assert_ne!(first.payload_id, standalone_payload_id(&block.header));
    let mut sequence = Sequence::start(first).unwrap();
    // An older version (the renderer runs behind) is already covered; the next continues.
    assert_eq!(stream.follows(&version(&TxList::from(vec![transfer(0)]), 2)), Follow::Covered);
    assert_eq!(stream.preconfirmed(&version(&txs, 3), &StateChanges::default(), None), None);
    let more = txs.appended(&[transfer(3)]);
    assert_eq!(stream.follows(&version(&more, 4)), Follow::Next);
    let next =
        decode(stream.preconfirmed(&version(&more, 4), &StateChanges::default(), None).unwrap().as_bytes()).unwrap();
    assert_eq!((next.index, next.diff.transactions.len()), (1, 1));
    assert!(sequence.push(next).unwrap());
    let all: Vec<_> = more.iter().map(|t| alloy_primitives::Bytes::from(t.tx.encoded_2718())).collect();
    assert_eq!(sequence.transactions, all);
    // A pre-confirmation skipped is a break: the block starts over.
    assert_eq!(stream.follows(&version(&more, 6)), Follow::Break);
}

#[test]
fn a_block_opened_again_is_never_published_under_an_id_already_used() {
    let mut stream = FlashblockStream::default();
    let txs = TxList::from(vec![transfer(0)]);
    // A rewind opens the same block (same parent, number, timestamp) again.
    let ids: Vec<_> = (0..3)
        .map(|_| decode(stream.opened(&version(&txs, 0), &StateChanges::default(), None, false).as_bytes()).unwrap())
        .map(|m| m.payload_id)
        .collect();
    assert_eq!(ids[0], standalone_payload_id(&version(&txs, 0).header));
    assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
}

#[test]
fn a_seal_that_changes_the_header_gets_one_more_message_naming_the_sealed_block() {
    let mut stream = FlashblockStream::default();
    let txs = TxList::from(vec![transfer(0), transfer(1)]);
    let root = B256::with_last_byte(0xa1);
    stream.opened(&version(&txs, 0), &StateChanges::default(), Some(root), false);
    let last = decode(stream.preconfirmed(&version(&txs, 1), &StateChanges::default(), Some(root)).unwrap().as_bytes())
        .unwrap();
    // Sealed as the last pre-confirmation showed it: nothing more to say.
    let mut same = version(&txs, 1);
    same.header.state_root = root;
    same.hash = Some(same.header.hash_slow());
    assert_eq!(same.hash, Some(last.diff.block_hash));
    assert_eq!(stream.sealed(&same), None);
    // Sealed with what post-block system calls add (a state change, a requests hash).
    let mut sealed = version(&txs, 1);
    sealed.header.state_root = B256::with_last_byte(0xa2);
    sealed.header.requests_hash = Some(B256::with_last_byte(0x77));
    sealed.hash = Some(sealed.header.hash_slow());
    let m = decode(stream.sealed(&sealed).expect("one more message").as_bytes()).unwrap();
    assert_eq!((m.index, m.payload_id, m.diff.transactions.len()), (2, last.payload_id, 0));
    assert_eq!((m.diff.state_root, Some(m.diff.block_hash)), (sealed.header.state_root, sealed.hash));
}

//! The whole chain: decoding, body roots, header rules block by block, the Merge.

use std::collections::BTreeMap;
use std::io::Read;

use alloy_consensus::{constants::EMPTY_OMMER_ROOT_HASH, proofs, Transaction as _};
use alloy_eips::Typed2718;
use alloy_primitives::U256;
use preconf_chain::consensus::{
    check_body, check_header, expects_proof_of_stake, next_base_fee, next_excess_blob_gas, total_difficulty,
    BlockReader, Parent,
};
use revm::primitives::hardfork::SpecId;

use super::kit;

#[test]
fn decodes_all_54_blocks_and_249_transactions() {
    let blocks = kit::blocks();
    assert_eq!(blocks.len(), 54);
    let numbers: Vec<u64> = blocks.iter().map(|b| b.header.number).collect();
    assert_eq!(numbers, (1..=54).collect::<Vec<_>>());
    let mut by_type = BTreeMap::new();
    for b in &blocks {
        for tx in &b.body.transactions {
            *by_type.entry(tx.ty()).or_insert(0) += 1;
        }
    }
    assert_eq!(by_type, BTreeMap::from([(0, 196), (1, 23), (2, 23), (3, 6), (4, 1)]));
    let blob_blocks: Vec<u64> = blocks
        .iter()
        .filter(|b| b.body.transactions.iter().any(|t| t.blob_versioned_hashes().is_some_and(|h| !h.is_empty())))
        .map(|b| b.header.number)
        .collect();
    assert_eq!(blob_blocks, [42, 43, 45, 48, 51, 53]);
    assert_eq!(blocks.iter().filter(|b| !b.body.ommers.is_empty()).count(), 18);
    // The head the upstream fork choice names.
    let fcu: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(kit::kit_dir().join("chain/headfcu.json")).unwrap()).unwrap();
    let head = fcu["params"][0]["headBlockHash"].as_str().unwrap();
    assert_eq!(blocks[53].header.hash_slow().to_string(), head);
}

/// Hands out at most 7 bytes per read, so blocks and length prefixes straddle reads.
struct Trickle<R>(R);

impl<R: Read> Read for Trickle<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(7);
        self.0.read(&mut buf[..n])
    }
}

#[test]
fn reader_streams_blocks_with_contiguous_offsets() {
    let file = std::fs::File::open(kit::chain_file()).unwrap();
    let size = file.metadata().unwrap().len();
    let read: Vec<_> = BlockReader::new(Trickle(file)).map(|b| b.expect("decodes in small reads")).collect();
    let whole = kit::blocks();
    assert_eq!(read.len(), whole.len());
    let mut offset = 0;
    for (i, (fb, b)) in read.iter().zip(&whole).enumerate() {
        assert_eq!(fb.index, i as u64);
        assert_eq!(fb.offset, offset, "block #{i} starts where the previous one ended");
        assert_eq!(fb.block.header.hash_slow(), b.header.hash_slow());
        offset += fb.len;
    }
    assert_eq!(offset, size, "the blocks cover the whole file");
}

#[test]
fn every_body_matches_its_header() {
    let spec = kit::spec();
    let mut with_withdrawals = Vec::new();
    for b in kit::blocks() {
        let h = &b.header;
        assert_eq!(proofs::calculate_transaction_root(&b.body.transactions), h.transactions_root, "block {}", h.number);
        assert_eq!(proofs::calculate_ommers_root(&b.body.ommers), h.ommers_hash, "block {}", h.number);
        let withdrawals_root = b.body.withdrawals.as_ref().map(|w| proofs::calculate_withdrawals_root(w));
        assert_eq!(withdrawals_root, h.withdrawals_root, "block {}", h.number);
        if b.body.withdrawals.as_ref().is_some_and(|w| !w.is_empty()) {
            with_withdrawals.push(h.number);
        }
        check_body(&spec, &b).unwrap_or_else(|e| panic!("{e}"));
    }
    let expected: Vec<u64> = kit::txinfo()["withdrawals"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.parse().unwrap())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(with_withdrawals, expected);
}

#[test]
fn uncles_are_the_ones_the_generator_recorded() {
    let info = kit::txinfo();
    let recorded = info["uncles"].as_object().unwrap();
    let blocks = kit::blocks();
    assert_eq!(recorded.len(), 18);
    for (number, entry) in recorded {
        let b = &blocks[number.parse::<usize>().unwrap() - 1];
        let hashes: Vec<String> = b.body.ommers.iter().map(|u| u.hash_slow().to_string()).collect();
        let want: Vec<String> =
            entry["hashes"].as_array().unwrap().iter().map(|h| h.as_str().unwrap().to_string()).collect();
        assert_eq!(hashes, want, "uncles of block {number}");
    }
}

#[test]
fn every_header_follows_from_its_parent() {
    let spec = kit::spec();
    let (genesis, genesis_hash) = kit::genesis(&spec);
    let blocks = kit::blocks();
    assert_eq!(blocks[0].header.parent_hash, genesis_hash, "genesis rebuilt from genesis.json is block 1's parent");
    let mut parent = genesis;
    let mut parent_hash = genesis_hash;
    let mut td = parent.difficulty;
    for b in &blocks {
        let h = &b.header;
        assert_eq!(
            next_base_fee(&spec, &parent, h.number, h.timestamp),
            h.base_fee_per_gas,
            "base fee of block {}",
            h.number
        );
        assert_eq!(
            next_excess_blob_gas(&spec, &parent, h.timestamp),
            h.excess_blob_gas,
            "excess blob gas of block {}",
            h.number
        );
        check_header(&spec, &Parent { header: &parent, hash: parent_hash, total_difficulty: td }, h)
            .unwrap_or_else(|e| panic!("{e}"));
        td = total_difficulty(td, h);
        parent_hash = h.hash_slow();
        parent = h.clone();
    }
    // London (block 27): 1 gwei and the doubled gas limit.
    let (b26, b27) = (&blocks[25].header, &blocks[26].header);
    assert_eq!((b26.base_fee_per_gas, b27.base_fee_per_gas), (None, Some(1_000_000_000)));
    assert_eq!((b26.gas_limit, b27.gas_limit), (100_000_000, 200_000_000));
    // The base fee moves afterwards (the rule is exercised, not just carried over).
    let fees: std::collections::BTreeSet<_> = blocks.iter().filter_map(|b| b.header.base_fee_per_gas).collect();
    assert!(fees.len() > 10, "base fees vary: {fees:?}");
}

#[test]
fn merge_happens_when_total_difficulty_reaches_ttd_at_block_35() {
    let spec = kit::spec();
    let ttd = spec.genesis.config.terminal_total_difficulty.expect("genesis names a TTD");
    let (genesis, _) = kit::genesis(&spec);
    let mut td = genesis.difficulty;
    let mut tds = vec![td];
    for b in kit::blocks() {
        // Before each block: the parent's TD decides PoW or PoS, and the fork rules agree.
        let pos = expects_proof_of_stake(&spec, td);
        assert_eq!(pos, b.header.difficulty.is_zero(), "block {} difficulty", b.header.number);
        assert_eq!(spec.is_merged(b.header.number), pos, "ChainSpec::is_merged({})", b.header.number);
        let spec_id = spec.spec_for_header(&b.header);
        assert_eq!(spec_id.is_enabled_in(SpecId::MERGE), pos, "spec of block {}", b.header.number);
        td = total_difficulty(td, &b.header);
        tds.push(td);
    }
    assert!(tds[34] < ttd, "TD after block 34");
    assert_eq!(tds[35], ttd, "TD after block 35 is exactly the TTD");
    assert_eq!(tds[54], ttd, "PoS blocks add no difficulty");
    assert_eq!(spec.spec_for_header(&kit::blocks()[35].header), SpecId::MERGE);
}

#[test]
fn proof_of_stake_blocks_have_no_uncles() {
    for b in kit::blocks().iter().skip(35) {
        assert_eq!(b.header.ommers_hash, EMPTY_OMMER_ROOT_HASH);
        assert_eq!(b.header.difficulty, U256::ZERO);
    }
}

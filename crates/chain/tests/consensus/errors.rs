//! Bad input is refused with the block, the field and both values named.

use std::io::Cursor;

use alloy_consensus::{Block, Header, TxEnvelope};
use alloy_primitives::{Bloom, B256, U256};
use preconf_chain::consensus::{
    check_body, check_executed, check_header, total_difficulty, Basis, BlockFileError, BlockReader, ConsensusError,
    Executed, Field, Parent,
};
use preconf_chain::spec::ChainSpec;

use super::kit;

/// Headers 0..=54 and the total difficulty after each.
fn headers_and_tds(spec: &ChainSpec) -> (Vec<Header>, Vec<U256>) {
    let (genesis, _) = kit::genesis(spec);
    let mut headers = vec![genesis];
    headers.extend(kit::blocks().into_iter().map(|b| b.header));
    let mut tds = vec![headers[0].difficulty];
    for h in &headers[1..] {
        tds.push(total_difficulty(*tds.last().unwrap(), h));
    }
    (headers, tds)
}

/// Checks block `n`'s header after `tamper` changed it.
fn tampered(n: usize, tamper: impl FnOnce(&mut Header)) -> Result<(), ConsensusError> {
    let spec = kit::spec();
    let (headers, tds) = headers_and_tds(&spec);
    let parent = Parent { header: &headers[n - 1], hash: headers[n - 1].hash_slow(), total_difficulty: tds[n - 1] };
    let mut header = headers[n].clone();
    check_header(&spec, &parent, &header).expect("untampered header passes");
    tamper(&mut header);
    check_header(&spec, &parent, &header)
}

fn field_of(r: Result<(), ConsensusError>, number: u64) -> Field {
    let e = r.expect_err("the tampered block is refused");
    assert_eq!(e.number, number);
    e.field
}

#[test]
fn tampered_headers_name_the_field() {
    let e = tampered(30, |h| h.base_fee_per_gas = h.base_fee_per_gas.map(|f| f + 1)).unwrap_err();
    assert_eq!(e.to_string(), "block 30: invalid baseFeePerGas: header has 670476526, the rules require 670476525");
    assert_eq!(field_of(tampered(26, |h| h.base_fee_per_gas = Some(1_000_000_000)), 26), Field::BaseFee);
    assert_eq!(field_of(tampered(50, |h| h.excess_blob_gas = Some(131_072)), 50), Field::ExcessBlobGas);
    assert_eq!(field_of(tampered(41, |h| h.excess_blob_gas = Some(0)), 41), Field::ExcessBlobGas);
    assert_eq!(field_of(tampered(30, |h| h.timestamp = 290), 30), Field::Timestamp);
    assert_eq!(field_of(tampered(30, |h| h.parent_hash = B256::ZERO), 30), Field::ParentHash);
    assert_eq!(field_of(tampered(30, |h| h.number = 31), 30 + 1), Field::Number);
    assert_eq!(field_of(tampered(30, |h| h.extra_data = vec![0u8; 33].into()), 30), Field::ExtraData);
    assert_eq!(field_of(tampered(30, |h| h.gas_used = h.gas_limit + 1), 30), Field::GasUsed);
    assert_eq!(field_of(tampered(20, |h| h.difficulty += U256::from(1)), 20), Field::Difficulty);
    // Before the TTD a block must be proof of work; after it, proof of stake.
    assert_eq!(field_of(tampered(35, |h| h.difficulty = U256::ZERO), 35), Field::Difficulty);
    assert_eq!(field_of(tampered(36, |h| h.difficulty = U256::from(131_072)), 36), Field::Difficulty);
    assert_eq!(field_of(tampered(36, |h| h.nonce = [0, 0, 0, 0, 0, 0, 0, 1].into()), 36), Field::Nonce);
    // Fork fields must appear exactly when their fork starts.
    assert_eq!(field_of(tampered(40, |h| h.withdrawals_root = None), 40), Field::WithdrawalsRoot);
    assert_eq!(field_of(tampered(38, |h| h.withdrawals_root = Some(B256::ZERO)), 38), Field::WithdrawalsRoot);
    assert_eq!(field_of(tampered(42, |h| h.parent_beacon_block_root = None), 42), Field::ParentBeaconBlockRoot);
    assert_eq!(field_of(tampered(45, |h| h.requests_hash = None), 45), Field::RequestsHash);
    assert_eq!(field_of(tampered(44, |h| h.requests_hash = Some(B256::ZERO)), 44), Field::RequestsHash);
}

#[test]
fn gas_limit_moves_less_than_a_1024th() {
    // Block 30's parent has 200M: 200M / 1024 = 195312 (integer), and the move must stay
    // strictly below it, so at most 195311 either way.
    assert!(tampered(30, |h| h.gas_limit = 200_195_311).is_ok());
    assert!(tampered(30, |h| h.gas_limit = 199_804_689).is_ok());
    assert_eq!(field_of(tampered(30, |h| h.gas_limit = 200_195_312), 30), Field::GasLimit);
    assert_eq!(field_of(tampered(30, |h| h.gas_limit = 199_804_688), 30), Field::GasLimit);
    // London's first block may double the limit, not more; before London it may not.
    assert!(tampered(27, |h| h.gas_limit = 200_195_311).is_ok());
    assert_eq!(field_of(tampered(27, |h| h.gas_limit = 200_195_312), 27), Field::GasLimit);
    assert_eq!(field_of(tampered(26, |h| h.gas_limit = 200_000_000), 26), Field::GasLimit);
}

fn body_error(n: usize, tamper: impl FnOnce(&mut Block<TxEnvelope>)) -> ConsensusError {
    let spec = kit::spec();
    let mut block = kit::blocks().swap_remove(n - 1);
    tamper(&mut block);
    check_body(&spec, &block).expect_err("the tampered body is refused")
}

#[test]
fn tampered_bodies_name_the_field() {
    let e = body_error(2, |b| b.body.transactions.swap(0, 1));
    assert_eq!((e.number, e.field), (2, Field::TransactionsRoot));
    let e = body_error(10, |b| b.body.ommers.clear());
    assert_eq!((e.number, e.field), (10, Field::OmmersHash));
    let e = body_error(39, |b| b.body.withdrawals.as_mut().unwrap()[0].amount += 1);
    assert_eq!((e.number, e.field), (39, Field::WithdrawalsRoot));
    let e = body_error(39, |b| b.body.withdrawals = None);
    assert_eq!(
        (e.number, e.field, e.required.to_string().as_str(), e.found.to_string().as_str()),
        (39, Field::WithdrawalsRoot, "present", "absent")
    );
    let e = body_error(42, |b| b.header.blob_gas_used = Some(0));
    assert_eq!(
        (e.number, e.field, e.required.to_string().as_str(), e.found.to_string().as_str()),
        (42, Field::BlobGasUsed, "131072", "0")
    );
    assert_eq!(e.to_string(), "block 42: invalid blobGasUsed: header has 0, the body gives 131072");
    // Three uncles (hash kept consistent so the count rule is what fails).
    let e = body_error(10, |b| {
        let u = b.body.ommers[0].clone();
        b.body.ommers.extend([u.clone(), u]);
        b.header.ommers_hash = alloy_consensus::proofs::calculate_ommers_root(&b.body.ommers);
    });
    assert_eq!((e.number, e.field), (10, Field::Ommers));
}

#[test]
fn osaka_blocks_may_not_exceed_the_rlp_size_limit() {
    // 400k withdrawals of 25 bytes each: about 10 MB, over EIP-7934's 8 MiB limit.
    let stuff = |b: &mut Block<TxEnvelope>| {
        let w =
            alloy_eips::eip4895::Withdrawal { index: 1, validator_index: 2, address: Default::default(), amount: 3 };
        b.body.withdrawals = Some(vec![w; 400_000].into());
    };
    let e = body_error(48, stuff);
    assert_eq!((e.number, e.field), (48, Field::Size));
    assert!(
        e.required.to_string() == "at most 8388608 bytes" && e.found.to_string().parse::<usize>().unwrap() > 8_388_608,
        "{e}"
    );
    // Before Osaka there is no size rule: the same block fails on its withdrawals root.
    let e = body_error(47, stuff);
    assert_eq!((e.number, e.field), (47, Field::WithdrawalsRoot));
}

/// A change to one field of an execution result.
type Tamper = fn(&mut Executed);

#[test]
fn execution_results_are_compared_field_by_field() {
    let header = kit::blocks().swap_remove(44).header; // block 45: a withdrawal request
    let agreed = Executed {
        state_root: header.state_root,
        receipts_root: header.receipts_root,
        logs_bloom: header.logs_bloom,
        gas_used: header.gas_used,
        requests_hash: header.requests_hash,
    };
    assert_eq!(check_executed(&header, &agreed), Ok(()));
    let cases: [(Field, Tamper); 5] = [
        (Field::StateRoot, |e| e.state_root = B256::ZERO),
        (Field::ReceiptsRoot, |e| e.receipts_root = B256::ZERO),
        (Field::LogsBloom, |e| e.logs_bloom = Bloom::ZERO),
        (Field::GasUsed, |e| e.gas_used += 1),
        (Field::RequestsHash, |e| e.requests_hash = Some(alloy_eips::eip7685::EMPTY_REQUESTS_HASH)),
    ];
    let mut executed = agreed.clone();
    executed.gas_used = 53_064;
    let e = check_executed(&header, &executed).unwrap_err();
    // The header's value first, then the node's: an operator must not read them swapped.
    assert_eq!(
        e.to_string(),
        format!("block 45: invalid gasUsed: header has {}, execution gives 53064", header.gas_used)
    );
    for (field, change) in cases {
        let mut executed = agreed.clone();
        change(&mut executed);
        let e = check_executed(&header, &executed).unwrap_err();
        assert_eq!((e.number, e.field), (45, field));
        assert_eq!(e.found.to_string(), header_value(&header, field));
        assert_eq!(e.basis, Basis::Execution);
    }
}

fn header_value(h: &Header, field: Field) -> String {
    match field {
        Field::StateRoot => h.state_root.to_string(),
        Field::ReceiptsRoot => h.receipts_root.to_string(),
        Field::LogsBloom => h.logs_bloom.to_string(),
        Field::GasUsed => h.gas_used.to_string(),
        Field::RequestsHash => h.requests_hash.unwrap().to_string(),
        other => unreachable!("{other}"),
    }
}

fn read_all(bytes: Vec<u8>) -> (usize, Option<BlockFileError>) {
    let mut ok = 0;
    for item in BlockReader::new(Cursor::new(bytes)) {
        match item {
            Ok(_) => ok += 1,
            Err(e) => return (ok, Some(e)),
        }
    }
    (ok, None)
}

#[test]
fn bad_files_name_the_block_and_byte_offset() {
    let bytes = std::fs::read(kit::chain_file()).unwrap();
    let offsets: Vec<u64> = BlockReader::new(Cursor::new(bytes.clone())).map(|b| b.unwrap().offset).collect();
    assert_eq!(read_all(Vec::new()).0, 0, "an empty file holds no blocks");

    // Cut in the middle of block #2 (the third block).
    let cut = (offsets[2] + 100) as usize;
    let (ok, err) = read_all(bytes[..cut].to_vec());
    let err = err.expect("truncation is an error");
    assert_eq!((ok, err.index(), err.offset()), (2, 2, offsets[2]));
    assert!(err.to_string().contains(&format!("block #2 at byte {}: file ends inside the block", offsets[2])), "{err}");

    // A stray byte after the last block.
    let mut trailing = bytes.clone();
    trailing.push(0x80);
    let (ok, err) = read_all(trailing);
    let err = err.expect("trailing garbage is an error");
    assert_eq!((ok, err.index(), err.offset()), (54, 54, bytes.len() as u64));
    assert!(err.to_string().contains("expected an RLP list"), "{err}");

    // A block whose list holds a field that is not a header: RLP decoding fails.
    let mut corrupt = bytes.clone();
    let at = offsets[5] as usize;
    let header_start = at + 1 + (corrupt[at] - 0xf7) as usize; // skip the block's list prefix
    corrupt[header_start] = 0x85; // the header list becomes a 5-byte string
    let (ok, err) = read_all(corrupt);
    let err = err.expect("a corrupt block is an error");
    assert_eq!((ok, err.index(), err.offset()), (5, 5, offsets[5]));
    assert!(err.to_string().contains("invalid block RLP"), "{err}");
}

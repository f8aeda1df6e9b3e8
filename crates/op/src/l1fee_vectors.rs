//! Every vector of test/fixtures/op/l1-fee-vectors.md (op-geth's, op-revm's and reth's test
//! values, each source named there), run through the node's L1-fee path: op-revm's
//! `L1BlockInfo` with the parameters read by `l1info`, and the receipt fields built from it.
//! The named transactions are read from that file, so the bytes live in one place.
//!
//! op-revm keeps its FastLZ length private; its Fjord data gas,
//! `max(100e6, 836500·len − 42585600)·16/1e6`, shows the length exactly above 170 bytes
//! (1600 below), so the FastLZ table is checked through it.

use alloy_primitives::{hex, keccak256, Bytes, U256};
use op_revm::{L1BlockInfo, OpSpecId};
use revm::interpreter::Gas;

use crate::deposit::TxDeposit;
use crate::l1info::{receipt_fields, L1Info};

const VECTORS: &str = include_str!("../../../test/fixtures/op/l1-fee-vectors.md");
const EMPTY_TX: &str = "0xdd80808094095e7baea6a6c7c4c2dfeb977efac326af552d878080808080";
const FACADE: [u8; 3] = hex!("facade");
const FA00CA00DE: [u8; 5] = hex!("fa00ca00de");

/// The bytes the vectors file names `name` (on the line after the name).
fn named(name: &str) -> Bytes {
    let marker = format!("- `{name}`");
    let mut lines = VECTORS.lines().skip_while(|l| !l.starts_with(&marker));
    lines.next().unwrap_or_else(|| panic!("{name} is not in the vectors file"));
    lines.next().unwrap().trim().trim_matches('`').parse().unwrap()
}

fn u(v: u64) -> U256 {
    U256::from(v)
}

/// The L1 values of an L1-info deposit in the vectors file.
fn l1_info_of(name: &str) -> L1Info {
    let deposit = TxDeposit::decode_2718(&named(name)).unwrap();
    L1Info::from_calldata(&deposit.input).unwrap()
}

fn bedrock(base_fee: u64, overhead: u64, scalar: u64) -> L1BlockInfo {
    L1BlockInfo {
        l1_base_fee: u(base_fee),
        l1_fee_overhead: Some(u(overhead)),
        l1_base_fee_scalar: u(scalar),
        ..Default::default()
    }
}

fn ecotone(base_fee: u64, blob_base_fee: u64, scalar: u64, blob_scalar: u64) -> L1BlockInfo {
    L1BlockInfo {
        l1_base_fee: u(base_fee),
        l1_base_fee_scalar: u(scalar),
        l1_blob_base_fee: Some(u(blob_base_fee)),
        l1_blob_base_fee_scalar: Some(u(blob_scalar)),
        ..Default::default()
    }
}

/// Fjord's data gas for a FastLZ length, the spec's formula.
fn fjord_gas(len: u64) -> U256 {
    u((836_500 * len).saturating_sub(42_585_600).max(100_000_000) * 16 / 1_000_000)
}

/// `n` bytes FastLZ cannot shorten (a keccak stream).
fn incompressible(n: usize) -> Vec<u8> {
    (0u64..).flat_map(|i| keccak256(i.to_be_bytes()).0).take(n).collect()
}

/// An incompressible input whose FastLZ length is `len` (> 170), found through Fjord's
/// data gas, which tells lengths above 170 apart.
fn input_of_flz_len(len: u64) -> Vec<u8> {
    let any = L1BlockInfo::default();
    (1..2 * len as usize)
        .map(incompressible)
        .find(|input| any.data_gas(input, OpSpecId::FJORD) == fjord_gas(len))
        .unwrap_or_else(|| panic!("no incompressible input has FastLZ length {len}"))
}

fn fee(info: &L1BlockInfo, input: &[u8], spec: OpSpecId) -> U256 {
    info.clone().calculate_tx_l1_cost(input, spec)
}

#[test]
fn fastlz_lengths_through_fjord_data_gas() {
    let any = L1BlockInfo::default();
    let gas = |input: &[u8]| any.data_gas(input, OpSpecId::FJORD);
    let cc = named("CC");
    let b5d = named("B5D");
    assert_eq!((cc.len(), b5d.len()), (345, 1151));
    for (input, len) in [
        (vec![], 0),
        (vec![1u8; 1000], 21),
        (vec![0u8; 1000], 21),
        (vec![0x2a; 1000], 21),
        (FACADE.to_vec(), 4),
        (hex::decode(EMPTY_TX).unwrap(), 31),
        (cc.to_vec(), 202),
        (b5d.to_vec(), 471),
    ] {
        assert_eq!(gas(&input), fjord_gas(len), "input of {} bytes", input.len());
    }
    assert_eq!(fjord_gas(202), u(2022), "CC is above the minimum: its length is pinned exactly");
}

#[test]
fn bedrock_regolith_ecotone_fjord_on_empty_tx() {
    let empty_tx = hex::decode(EMPTY_TX).unwrap();
    // 1, 2: Bedrock adds 68 non-zero bytes of signature; the gas includes the overhead.
    let b = bedrock(1_000_000_000, 50, 7_000_000);
    let f = receipt_fields(&b, &empty_tx, OpSpecId::BEDROCK);
    assert_eq!((f.l1_gas_used, f.l1_fee), (u(1618), u(11_326_000_000_000)));
    assert_eq!(f.l1_fee_scalar.as_deref(), Some("7"));
    let f = receipt_fields(&b, &empty_tx, OpSpecId::REGOLITH);
    assert_eq!((f.l1_gas_used, f.l1_fee), (u(530), u(3_710_000_000_000)));
    // 3, 4
    let e = ecotone(1_000_000_000, 10_000_000, 2, 3);
    let f = receipt_fields(&e, &empty_tx, OpSpecId::ECOTONE);
    assert_eq!((f.l1_gas_used, f.l1_fee), (u(480), u(960_900)));
    assert_eq!((f.l1_fee_scalar, f.l1_base_fee_scalar), (None, Some(u(2))));
    let f = receipt_fields(&e, &empty_tx, OpSpecId::FJORD);
    assert_eq!((f.l1_gas_used, f.l1_fee), (u(1600), u(3_203_000)));
}

#[test]
fn fjord_minimum_and_above() {
    let e = ecotone(1_000_000_000, 10_000_000, 2, 3);
    // 5: FastLZ lengths up to 170 all pay the 100-byte minimum. The longest incompressible
    // input still at the minimum stands for them (its length is at most 170).
    let at_min = (1..400).map(incompressible).take_while(|i| e.data_gas(i, OpSpecId::FJORD) == u(1600)).last().unwrap();
    for input in [at_min.as_slice(), &FACADE, &hex::decode(EMPTY_TX).unwrap()] {
        let f = receipt_fields(&e, input, OpSpecId::FJORD);
        assert_eq!((f.l1_gas_used, f.l1_fee), (u(1600), u(3_203_000)));
    }
    // 6
    for len in [171, 175, 200] {
        let f = receipt_fields(&e, &input_of_flz_len(len), OpSpecId::FJORD);
        assert!(f.l1_gas_used > u(1600) && f.l1_fee > u(3_203_000), "length {len}: {f:?}");
    }
    // 7: op-geth's parity case with the Solidity GasPriceOracle.
    let f = receipt_fields(&ecotone(2_000_000, 3_000_000, 20, 15), &input_of_flz_len(235), OpSpecId::FJORD);
    assert_eq!((f.l1_gas_used, f.l1_fee), (u(2463), u(105_484)));
}

#[test]
fn first_ecotone_block_keeps_bedrock_costs() {
    // 8: the first Ecotone block's L1-info deposit is still Bedrock's (ABI words).
    let mut calldata = crate::l1info::SELECTOR_BEDROCK.to_vec();
    for word in [20_000_000u64, 1_700_000_000, 1_000_000_000, 0, 3, 0, 50, 7_000_000] {
        calldata.extend_from_slice(&U256::from(word).to_be_bytes::<32>());
    }
    let info = L1Info::from_calldata(&calldata).unwrap();
    assert_eq!((info.number, info.timestamp), (20_000_000, 1_700_000_000));
    let fees = info.fees_for(OpSpecId::ECOTONE);
    assert!(fees.empty_ecotone_scalars);
    let f = receipt_fields(&fees, &hex::decode(EMPTY_TX).unwrap(), OpSpecId::ECOTONE);
    assert_eq!((f.l1_gas_used, f.l1_fee), (u(530), u(3_710_000_000_000)));
}

#[test]
fn data_gas_and_costs_on_short_inputs() {
    let any = bedrock(1_000_000, 1_000_000, 1_000_000);
    // 9-12
    for (input, want) in [(&FACADE[..], [1136, 48, 1600]), (&FA00CA00DE[..], [1144, 56, 1600])] {
        for (spec, gas) in [OpSpecId::BEDROCK, OpSpecId::REGOLITH, OpSpecId::FJORD].into_iter().zip(want) {
            assert_eq!(any.data_gas(input, spec), u(gas), "{spec:?}");
        }
    }
    // 13-16
    assert_eq!(fee(&bedrock(1000, 1000, 1000), &FACADE, OpSpecId::REGOLITH), u(1048));
    let e = ecotone(1000, 1000, 1000, 1000);
    assert_eq!(fee(&e, &FACADE, OpSpecId::ECOTONE), u(51));
    let empty_scalars = L1BlockInfo { empty_ecotone_scalars: true, ..bedrock(1000, 1000, 1000) };
    assert_eq!(fee(&empty_scalars, &FACADE, OpSpecId::ECOTONE), u(1048));
    assert_eq!(fee(&e, &FACADE, OpSpecId::FJORD), u(1700));
    // 17: CC's estimate is 126387400, its data gas that times 16 / 1e6.
    let cc = named("CC");
    assert_eq!(fee(&e, &cc, OpSpecId::FJORD), u(2148));
    assert_eq!(e.data_gas(&cc, OpSpecId::FJORD), u(126_387_400 * 16 / 1_000_000));
    // 18: nothing to post, or a deposit.
    for spec in [OpSpecId::BEDROCK, OpSpecId::REGOLITH, OpSpecId::ECOTONE, OpSpecId::FJORD] {
        assert_eq!(fee(&e, &[], spec), U256::ZERO);
        assert_eq!(fee(&e, &hex!("7efacade"), spec), U256::ZERO);
    }
}

#[test]
fn real_transactions_with_their_blocks_l1_values() {
    // 19: OP Mainnet under Ecotone.
    let f =
        receipt_fields(&ecotone(47_036_678_951, 57_422_457_042, 1368, 810_949), &named("TX_ECO"), OpSpecId::ECOTONE);
    assert_eq!((f.l1_gas_used, f.l1_fee), (u(2456), u(7_306_020_222_001)));
    // 20: OP Mainnet under Fjord, the parameters read from the block's own L1-info deposit.
    let op = l1_info_of("SYS_OP_124665056");
    assert_eq!(op.number, 20_633_763);
    assert_eq!(op.fees, ecotone(1_055_991_687, 1, 5227, 1_014_213));
    let f = receipt_fields(&op.fees_for(OpSpecId::FJORD), &named("TX_FJ"), OpSpecId::FJORD);
    assert_eq!((f.l1_gas_used, f.l1_fee), (u(4471), u(24_681_034_813)));
    // 21: Base under Granite (timestamp 1730216981), what reth puts in the receipt.
    let base = l1_info_of("SYS_BASE");
    assert_eq!(base.number, 21_072_278);
    let f = receipt_fields(&base.fees_for(OpSpecId::GRANITE), &named("TX_BASE"), OpSpecId::GRANITE);
    assert_eq!((f.l1_gas_used, f.l1_fee, f.l1_gas_price), (u(1600), u(191_150_293_412), u(14_121_491_676)));
    assert_eq!(f.l1_base_fee_scalar, Some(u(2269)));
    assert_eq!((f.l1_blob_base_fee, f.l1_blob_base_fee_scalar), (Some(u(1_324_954_204)), Some(u(1_055_762))));
    assert_eq!(f.l1_fee_scalar, None);
}

#[test]
fn operator_fee_isthmus_and_jovian() {
    let with = |scalar: u64, constant: u64| L1BlockInfo {
        operator_fee_scalar: Some(u(scalar)),
        operator_fee_constant: Some(u(constant)),
        ..ecotone(1, 1, 1, 1)
    };
    // 22, 23: Isthmus divides by 1e6, Jovian multiplies by 100.
    let info = with(1000, 10);
    assert_eq!(info.operator_fee_charge(&[1], u(1000), OpSpecId::ISTHMUS), u(11));
    assert_eq!(info.operator_fee_charge(&[1], u(1000), OpSpecId::JOVIAN), u(100_000_010));
    assert_eq!(info.operator_fee_charge(&hex!("7e01"), u(1000), OpSpecId::ISTHMUS), U256::ZERO, "deposits pay none");
    // 24: nothing used, so the whole charge above the constant comes back.
    assert_eq!(with(2000, 5).operator_fee_refund(&Gas::new(50_000), OpSpecId::ISTHMUS), u(100));
    // 25, 26: receipts carry the parameters when either is non-zero.
    let tx = named("TX_BASE");
    let f = receipt_fields(&with(0, 2), &tx, OpSpecId::ISTHMUS);
    assert_eq!((f.operator_fee_scalar, f.operator_fee_constant), (Some(U256::ZERO), Some(u(2))));
    let f = receipt_fields(&with(0, 0), &tx, OpSpecId::ISTHMUS);
    assert_eq!((f.operator_fee_scalar, f.operator_fee_constant), (None, None));
}

//! Jovian's header rules, as the OP specs state them (protocol/jovian/exec-engine.md):
//! extraData is version 1 ‖ denominator ‖ elasticity ‖ minBaseFee (u64 BE), 17 bytes; the
//! next base fee is computed on max(gasUsed, blobGasUsed) and held at the parent's
//! minBaseFee; `blobGasUsed` is the block's DA footprint, the sum over its non-deposit
//! transactions of max(100, (intercept + fastlzCoef·fastlzSize) / 1e6) times the
//! daFootprintGasScalar read from L1Block (slot 8, offset 12), and it may not exceed the
//! block's gas limit.

use alloy_consensus::Header;
use alloy_primitives::{address, keccak256, Address, Bytes, B64, U256};
use alloy_signer_local::PrivateKeySigner;
use preconf_op::block::{OpBlockBuilder, OpBlockError};
use preconf_op::dev::{dev_config, l1_block_code, DevL1Values, L1_BLOCK};
use preconf_op::{OpConfig, OpSpecId, OpTx};

use crate::base_block_1::GenesisState;
use crate::support::{attributes, call, dev_genesis, ETH};

const BOB: Address = address!("000000000000000000000000000000000000b0b0");

fn jovian_from(time: u64) -> OpConfig {
    let mut config = dev_config(901);
    (config.forks.isthmus_time, config.forks.jovian_time) = (Some(0), Some(time));
    config
}

/// The dev genesis with `signer` funded and L1Block's DA footprint gas scalar set to `scalar`.
fn genesis(signer: &PrivateKeySigner, scalar: u16) -> (GenesisState, Header) {
    // Offset 12 as Solidity packs it: counted from the slot's low end.
    let slot8 = U256::from(scalar) << 96;
    let (_, state, parent) = dev_genesis(serde_json::json!({
        signer.address().to_string(): { "balance": format!("{:#x}", 10 * ETH) },
        L1_BLOCK.to_string(): {
            "balance": "0x0", "code": l1_block_code().to_string(),
            "storage": { format!("{:#066x}", 8): format!("{slot8:#066x}") },
        },
    }));
    (state, parent)
}

/// 2,000 bytes of keccak output: FastLZ cannot shrink them, so the size estimate is above
/// the 100-byte minimum.
fn incompressible() -> Bytes {
    (0u32..63).flat_map(|i| keccak256(i.to_be_bytes()).0).take(2000).collect::<Vec<u8>>().into()
}

#[test]
fn da_footprint_and_extra_data() {
    let signer = PrivateKeySigner::random();
    let (state, parent) = genesis(&signer, 400);
    let config = jovian_from(0);
    let mut attrs = attributes(2);
    attrs.eip1559_params = Some(B64::from([0, 0, 0, 250, 0, 0, 0, 6]));
    attrs.min_base_fee = Some(7);
    let mut block = OpBlockBuilder::open(&config, &parent, &attrs, &state).unwrap();
    assert_eq!(block.spec(), OpSpecId::JOVIAN);
    block.push(OpTx::Deposit(DevL1Values::default().l1_info_deposit(0))).unwrap();
    assert_eq!(block.da_footprint(), 0, "deposits have no DA footprint");
    let base_fee = block.base_fee();
    // Two small transactions: each at the 100-byte minimum.
    for nonce in 0..2 {
        block.push(call(&signer, nonce, BOB, Bytes::new(), base_fee)).unwrap();
    }
    assert_eq!(block.da_footprint(), 2 * 100 * 400);
    let big = call(&signer, 2, BOB, incompressible(), base_fee);
    let estimate = op_revm::estimate_tx_compressed_size(&big.encoded_2718()) / 1_000_000;
    assert!(estimate > 1000, "incompressible calldata, far above the minimum: {estimate}");
    block.push(big).unwrap();

    let header = block.finish().unwrap().header;
    assert_eq!(header.blob_gas_used, Some((200 + estimate) * 400));
    let mut extra = vec![1u8, 0, 0, 0, 250, 0, 0, 0, 6];
    extra.extend_from_slice(&7u64.to_be_bytes());
    assert_eq!(header.extra_data, Bytes::from(extra));
}

#[test]
fn da_footprint_is_bounded_by_the_gas_limit() {
    let signer = PrivateKeySigner::random();
    // 100 bytes × 40,000 = 4 M per small transaction against a 10 M gas limit.
    let (state, parent) = genesis(&signer, 40_000);
    let mut attrs = attributes(2);
    attrs.gas_limit = 10_000_000;
    attrs.min_base_fee = Some(0);
    let config = jovian_from(0);
    let mut block = OpBlockBuilder::open(&config, &parent, &attrs, &state).unwrap();
    block.push(OpTx::Deposit(DevL1Values::default().l1_info_deposit(0))).unwrap();
    let base_fee = block.base_fee();
    for nonce in 0..2 {
        block.push(call(&signer, nonce, BOB, Bytes::new(), base_fee)).unwrap();
    }
    let refused = block.push(call(&signer, 2, BOB, Bytes::new(), base_fee)).unwrap_err();
    assert!(matches!(refused, OpBlockError::Transaction { index: 3, .. }), "{refused}");
    assert_eq!(block.txs().len(), 3);
    assert_eq!(block.finish().unwrap().header.blob_gas_used, Some(8_000_000));
}

#[test]
fn base_fee_from_a_jovian_parent() {
    let signer = PrivateKeySigner::random();
    let (state, genesis_header) = genesis(&signer, 400);
    let parent = |gas_used: u64, blob_gas_used: u64, min_base_fee: u64| {
        let mut extra = vec![1u8, 0, 0, 0, 250, 0, 0, 0, 6];
        extra.extend_from_slice(&min_base_fee.to_be_bytes());
        Header {
            gas_used,
            blob_gas_used: Some(blob_gas_used),
            base_fee_per_gas: Some(1_000_000_000),
            gas_limit: 30_000_000,
            extra_data: extra.into(),
            ..genesis_header.clone()
        }
    };
    let base_fee = |config: &OpConfig, parent: &Header| {
        OpBlockBuilder::open(config, parent, &attributes(2), &state).unwrap().base_fee()
    };
    let jovian = jovian_from(0);
    // Target 5 M (30 M / elasticity 6), denominator 250: a DA footprint of 10 M raises the
    // base fee by 1/250 where the 1 M of gas alone would lower it by 4/5 of that.
    assert_eq!(base_fee(&jovian, &parent(1_000_000, 10_000_000, 0)), 1_004_000_000);
    assert_eq!(base_fee(&jovian, &parent(1_000_000, 0, 0)), 996_800_000);
    // The minimum holds the base fee up.
    assert_eq!(base_fee(&jovian, &parent(0, 0, 5_000_000_000)), 5_000_000_000);
    // A parent before Jovian: gas alone, no minimum (its extraData is Holocene's).
    let later = jovian_from(100);
    let mut holocene_parent = parent(1_000_000, 10_000_000, 0);
    holocene_parent.extra_data = Bytes::from(vec![0u8, 0, 0, 0, 250, 0, 0, 0, 6]);
    assert_eq!(base_fee(&later, &holocene_parent), 996_800_000);
}

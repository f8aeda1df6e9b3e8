//! The Jovian dev chain's block (`--optimism --hardfork jovian`): its genesis holds Jovian's
//! L1Block, which takes Jovian's L1-info calldata and keeps the DA footprint gas scalar where
//! op-revm and the block builder read it; each transaction's DA footprint, its receipt
//! fields and the header's `blobGasUsed` agree; Jovian's operator fee is charged; the
//! genesis extraData's minimum base fee holds the next base fee up.

use alloy_primitives::{address, Address, Bytes, U256};
use alloy_signer_local::PrivateKeySigner;
use preconf_op::block::OpBlockBuilder;
use preconf_op::dev::{self, DevChain, DevHardfork, DevL1Values};
use preconf_op::l1info::{da_footprint, receipt_fields, L1Info};
use preconf_op::{OpConfig, OpSpecId, OpTx};

use crate::support::{attributes, call, dev_genesis_for, ETH};

const BOB: Address = address!("000000000000000000000000000000000000b0b0");

#[test]
fn jovian_dev_block() {
    let signer = PrivateKeySigner::random();
    let chain = DevChain { hardfork: DevHardfork::Jovian, min_base_fee: 3_000_000_000 };
    let funded = serde_json::json!({ signer.address().to_string(): { "balance": format!("{:#x}", 10 * ETH) } });
    let (genesis, state, parent) = dev_genesis_for(chain, funded);
    let config = OpConfig::from_genesis_config(&genesis["config"]).unwrap().unwrap();
    let mut attrs = attributes(2);
    attrs.min_base_fee = Some(chain.min_base_fee);
    let mut block = OpBlockBuilder::open(&config, &parent, &attrs, &state).unwrap();
    assert_eq!(block.spec(), OpSpecId::JOVIAN);
    // An empty genesis would lower the base fee below 1 gwei: its extraData's minimum holds it.
    assert_eq!(block.base_fee(), 3_000_000_000);

    let l1 = DevL1Values { da_footprint_gas_scalar: 1_000, operator_fee_scalar: 3, ..Default::default() };
    let deposit = l1.l1_info_deposit_at(1, OpSpecId::JOVIAN);
    let calldata = deposit.input.clone();
    assert!(block.push(OpTx::Deposit(deposit)).unwrap().success, "Jovian's L1Block takes Jovian's calldata");

    let base_fee = block.base_fee();
    let tx = call(&signer, 0, BOB, Bytes::from(vec![0xab; 600]), base_fee);
    let raw = tx.encoded_2718();
    let before = block.account(signer.address()).unwrap().unwrap().balance;
    let gas = block.push(tx).unwrap().gas_used;
    // The builder read the scalar the deposit stored in L1Block (slot 8, offset 12).
    assert_eq!(block.da_footprint(), 100 * 1_000, "600 equal bytes compress below the 100-byte minimum");
    let fees = L1Info::from_calldata(&calldata).unwrap().fees_for(OpSpecId::JOVIAN);
    let fields = receipt_fields(&fees, &raw, OpSpecId::JOVIAN);
    assert_eq!(fields.da_footprint_gas_scalar, Some(1_000));
    assert_eq!(fields.da_footprint, Some(block.da_footprint()));
    assert_eq!(da_footprint(&raw, 1_000), block.da_footprint());

    // Jovian's operator fee: gas × scalar × 100 (not / 1e6 as Isthmus's).
    let operator_fee = U256::from(gas * 3 * 100);
    let paid = U256::from(gas) * U256::from(base_fee + 1_000) + fields.l1_fee + operator_fee;
    assert_eq!(block.account(signer.address()).unwrap().unwrap().balance, before - paid);

    let header = block.finish().unwrap().header;
    assert_eq!(header.blob_gas_used, Some(100_000));
    assert_eq!(header.extra_data[0], 1, "Jovian's extraData version");
    assert_eq!(preconf_op::header::min_base_fee(&header), 3_000_000_000);
}

/// Isthmus's L1Block refuses Jovian's selector: the dev chain must hold Jovian's from the
/// block Jovian's deposits start.
#[test]
fn isthmus_l1_block_refuses_jovian_calldata() {
    let (genesis, state, parent) = dev_genesis_for(DevChain::default(), serde_json::json!({}));
    let mut config = OpConfig::from_genesis_config(&genesis["config"]).unwrap().unwrap();
    config.forks.jovian_time = Some(0);
    let mut block = OpBlockBuilder::open(&config, &parent, &attributes(2), &state).unwrap();
    let deposit = DevL1Values::default().l1_info_deposit_at(1, OpSpecId::JOVIAN);
    assert!(!block.push(OpTx::Deposit(deposit)).unwrap().success);
    let _ = dev::L1_BLOCK;
}

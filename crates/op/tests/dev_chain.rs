//! The OP dev chain's block: the L1-info deposit made from fixed L1 values into the L1Block
//! predeploy, then a signed transfer, through op-revm. The transfer's sender pays value,
//! gas and the L1 data fee, which the L1 fee vault receives; the receipt fields say the same.

use alloy_consensus::{SignableTransaction, TxEip1559, TxEnvelope};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{address, Address, TxKind, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use preconf_op::block::OpBlockBuilder;
use preconf_op::dev::{self, DevL1Values};
use preconf_op::l1info::{receipt_fields, L1Info};
use preconf_op::{OpSpecId, OpTx};

use crate::base_block_1::GenesisState;
use crate::support::{attributes, dev_genesis, ETH};

const BOB: Address = address!("000000000000000000000000000000000000b0b0");

#[test]
fn dev_block_charges_the_l1_fee() {
    let signer = PrivateKeySigner::random();
    let alice = signer.address();
    let (genesis, state, parent) =
        dev_genesis(serde_json::json!({ alice.to_string(): { "balance": format!("{:#x}", 10 * ETH) } }));
    let root = parent.state_root;
    let attributes = attributes(2);
    let config = preconf_op::OpConfig::from_genesis_config(&genesis["config"]).unwrap().unwrap();
    let mut block = OpBlockBuilder::open(&config, &parent, &attributes, &state).unwrap();
    assert_eq!(block.spec(), OpSpecId::ISTHMUS);
    let l1 = DevL1Values::default();
    let deposit = l1.l1_info_deposit(0);
    let calldata = deposit.input.clone();
    let executed = block.push(OpTx::Deposit(deposit)).unwrap();
    assert!(executed.success, "L1Block takes the values from the depositor");
    assert_eq!(executed.deposit_nonce, Some(0));

    let base_fee = block.base_fee();
    let tx = TxEip1559 {
        chain_id: 901,
        nonce: 0,
        gas_limit: 21_000,
        max_fee_per_gas: 2 * base_fee as u128,
        max_priority_fee_per_gas: 1_000,
        to: TxKind::Call(BOB),
        value: U256::from(ETH),
        ..Default::default()
    };
    let signature = signer.sign_hash_sync(&tx.signature_hash()).unwrap();
    let tx = TxEnvelope::Eip1559(tx.into_signed(signature));
    let raw = tx.encoded_2718();
    let executed = block.push(OpTx::Eth(tx)).unwrap();
    assert!(executed.success);
    let gas = executed.gas_used;
    assert_eq!(gas, 21_000);

    let fees = L1Info::from_calldata(&calldata).unwrap().fees_for(block.spec());
    let fields = receipt_fields(&fees, &raw, block.spec());
    assert!(fields.l1_fee > U256::ZERO, "a 1 gwei L1 base fee makes a non-zero L1 fee");
    assert_eq!(fields.l1_gas_price, l1.base_fee);
    assert_eq!(fields.l1_base_fee_scalar, Some(U256::from(l1.base_fee_scalar)));

    let price = U256::from(base_fee + 1_000);
    let balance = |block: &mut OpBlockBuilder<'_, GenesisState>, a| block.account(a).unwrap().map(|a| a.balance);
    let paid = U256::from(ETH) + U256::from(gas) * price + fields.l1_fee;
    assert_eq!(balance(&mut block, alice), Some(U256::from(10 * ETH) - paid));
    assert_eq!(balance(&mut block, BOB), Some(U256::from(ETH)));
    assert_eq!(balance(&mut block, dev::L1_FEE_VAULT), Some(fields.l1_fee));
    assert_eq!(balance(&mut block, dev::BASE_FEE_VAULT), Some(U256::from(gas * base_fee)));

    let sealed = block.finish().unwrap();
    assert_eq!(sealed.header.gas_used, sealed.txs.iter().map(|t| t.gas_used).sum::<u64>());
    assert_eq!(sealed.header.extra_data.len(), 9, "Holocene's EIP-1559 parameters");
    assert_ne!(sealed.header.state_root, root);
}

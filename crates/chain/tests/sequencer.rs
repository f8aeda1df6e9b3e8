//! Sequencer mode across the OP forks, at the builder's layer: a node driven by the Engine
//! API opens each block from op-node's attributes in its builder (`noTxPool: false`, an
//! empty pool) and seals it at getPayload; the same attributes with `noTxPool: true` are
//! built by crates/op's `execute`, as derivation replays a block. The two must be the same
//! block, header for header, on a chain whose forks come one after another after genesis:
//! Canyon's first block (the create2 deployer, empty withdrawals), Ecotone's (beacon root,
//! blob fields), Fjord and Granite, Holocene's first and second (eip1559Params in extraData,
//! then read back from the parent), Isthmus's (withdrawalsRoot, requests hash), Jovian's
//! first and second (DA footprint, minimum base fee).

use alloy_consensus::{SignableTransaction, TxEip1559, TxEnvelope};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{keccak256, Address, Bytes, TxKind, B64, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use preconf_chain::engine::types::{ForkchoiceState, PayloadAttributes, PayloadStatus, Version};
use preconf_chain::genesis::{dev_accounts, dev_genesis};
use preconf_chain::{ChainConfig, Node};
use preconf_op::deposit::TxDeposit;
use preconf_op::dev::{dev_config_for, optimism_genesis_for, DevChain, DevHardfork, DevL1Values};
use preconf_op::{OpConfig, OpSpecId};

/// Block `n` is at timestamp `2n`; each fork's first block is named here.
fn staggered_config(chain_id: u64) -> OpConfig {
    let mut config = dev_config_for(chain_id, DevHardfork::Jovian);
    let f = &mut config.forks;
    f.canyon_time = Some(2); // block 1
    (f.delta_time, f.ecotone_time) = (Some(4), Some(4)); // block 2
    (f.fjord_time, f.granite_time) = (Some(6), Some(6)); // block 3
    f.holocene_time = Some(8); // block 4
    f.isthmus_time = Some(12); // block 6
    f.jovian_time = Some(14); // block 7
    config
}

/// The Ethereum dev genesis (funded accounts, the beacon-root and history contracts) made
/// an OP chain's with Jovian's L1Block and GasPriceOracle, and the staggered forks.
fn genesis() -> (String, OpConfig) {
    let mut genesis = serde_json::to_value(dev_genesis()).unwrap();
    optimism_genesis_for(&mut genesis, DevChain { hardfork: DevHardfork::Jovian, min_base_fee: 0 }).unwrap();
    let config = staggered_config(genesis["config"]["chainId"].as_u64().unwrap());
    genesis["config"] = config.genesis_config();
    let header = genesis.as_object_mut().unwrap();
    for field in ["blobGasUsed", "excessBlobGas", "extraData"] {
        header.remove(field);
    }
    header.insert("timestamp".into(), "0x0".into());
    (genesis.to_string(), config)
}

/// Block `n`'s transactions: the L1-info deposit, a user deposit minting to a new account,
/// and a transfer signed by the first dev account (L1 data fee, DA footprint).
fn transactions(config: &OpConfig, n: u64, timestamp: u64) -> Vec<Bytes> {
    let l1_info = DevL1Values::default().l1_info_deposit_at(n, config.spec_at(timestamp));
    let user = TxDeposit {
        source_hash: keccak256(format!("user deposit {n}")),
        from: Address::repeat_byte(0xa1),
        to: TxKind::Call(Address::with_last_byte(n as u8)),
        mint: 2_000_000_000_000_000_000,
        value: U256::from(1_000_000_000_000_000u64),
        gas_limit: 100_000,
        is_system_transaction: false,
        input: Bytes::new(),
    };
    let key = PrivateKeySigner::from_bytes(&dev_accounts(1)[0].private_key).unwrap();
    let transfer = TxEip1559 {
        chain_id: config.chain_id,
        nonce: n - 1,
        gas_limit: 60_000,
        max_fee_per_gas: 100_000_000_000,
        max_priority_fee_per_gas: 1_000_000_000,
        to: TxKind::Call(Address::repeat_byte(0xbe)),
        value: U256::from(n),
        input: Bytes::from(vec![0x5a; 200]),
        ..Default::default()
    };
    let sig = key.sign_hash_sync(&transfer.signature_hash()).unwrap();
    let transfer: TxEnvelope = transfer.into_signed(sig).into();
    vec![l1_info.encoded_2718().into(), user.encoded_2718().into(), transfer.encoded_2718().into()]
}

fn attributes(config: &OpConfig, n: u64, no_tx_pool: bool) -> PayloadAttributes {
    let timestamp = 2 * n;
    let active = |fork| config.is_active(fork, timestamp);
    PayloadAttributes {
        timestamp,
        prev_randao: keccak256(format!("randao {n}")),
        fee_recipient: preconf_op::dev::SEQUENCER_FEE_VAULT,
        withdrawals: active(OpSpecId::CANYON).then(Vec::new),
        parent_beacon_block_root: active(OpSpecId::ECOTONE).then(|| keccak256(format!("beacon {n}"))),
        transactions: transactions(config, n, timestamp),
        no_tx_pool,
        gas_limit: Some(30_000_000),
        // Holocene's parameters: denominator 100, elasticity 4 (not the config's 250 and 6).
        eip1559_params: active(OpSpecId::HOLOCENE).then(|| B64::from([0, 0, 0, 100, 0, 0, 0, 4])),
        min_base_fee: active(OpSpecId::JOVIAN).then_some(2_000_000_000),
    }
}

#[test]
fn the_sequencers_block_is_the_exact_build_of_the_same_attributes_across_the_op_forks() {
    let (genesis, config) = genesis();
    let node = Node::open(ChainConfig {
        genesis: Some(genesis),
        engine_driven: true,
        preconf_interval_ms: 20,
        ..Default::default()
    })
    .expect("an engine-driven node builds an OP chain whose forks come after genesis");
    let engine = node.engine();
    let mut head = node.chain().view().head_hash();
    for n in 1..=8u64 {
        let timestamp = 2 * n;
        let ecotone = config.is_active(OpSpecId::ECOTONE, timestamp);
        let forkchoice = if ecotone { Version::V3 } else { Version::V2 };
        let get_payload = match (config.is_active(OpSpecId::ISTHMUS, timestamp), ecotone) {
            (true, _) => Version::V4,
            (false, true) => Version::V3,
            (false, false) => Version::V2,
        };
        let state = ForkchoiceState { head, safe: head, finalized: head };
        let start = |no_tx_pool| {
            let outcome = engine.forkchoice_updated(forkchoice, state, Some(attributes(&config, n, no_tx_pool)));
            let outcome = outcome.unwrap_or_else(|e| panic!("block {n}: {e}"));
            assert_eq!(outcome.status, PayloadStatus::Valid { latest_valid_hash: head });
            outcome.payload_id.expect("a payload id")
        };
        let exact = engine.get_payload(get_payload, start(true)).unwrap();
        let built = engine.get_payload(get_payload, start(false)).unwrap_or_else(|e| panic!("block {n}: {e}"));
        assert_eq!(built.header, exact.header, "block {n} (timestamp {timestamp}, {:?})", config.spec_at(timestamp));
        assert_eq!(built.hash, exact.hash);
        assert_eq!(built.transactions, exact.transactions);
        // Sealed by the builder: the chain's head now.
        assert_eq!(node.chain().view().head_hash(), built.hash, "block {n}");
        head = built.hash;
    }
    let last = node.chain().view().head.header.clone();
    // The chain went through every fork: the last block has Jovian's fields, a DA footprint
    // from its transfer, and the minimum base fee its parent named.
    assert!(last.blob_gas_used.is_some_and(|used| used > 0), "Jovian's DA footprint: {:?}", last.blob_gas_used);
    assert!(last.base_fee_per_gas.is_some_and(|fee| fee >= 2_000_000_000));
    assert_eq!(last.extra_data.len(), 17);
}

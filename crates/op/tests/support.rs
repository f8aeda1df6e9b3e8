//! What the fork-rule tests share: a dev chain's genesis state with accounts of the test's
//! own, its header, a signer and a block opened on it.

use std::collections::HashMap;

use alloy_consensus::{Header, SignableTransaction, TxEip1559, TxEnvelope};
use alloy_primitives::{Address, Bytes, TxKind, B256, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use preconf_op::block::Attributes;
use preconf_op::dev;
use preconf_op::genesis::{alloc, alloc_updates};
use preconf_op::OpTx;
use preconf_trie::state_root;

use crate::base_block_1::{Empty, GenesisState};

pub(crate) const ETH: u128 = 1_000_000_000_000_000_000;

/// The OP dev chain's genesis (chain 901) with `extra` accounts in its alloc (address →
/// op-geth alloc entry, replacing the dev chain's own): the state and the block-0 header.
pub(crate) fn dev_genesis(extra: serde_json::Value) -> (serde_json::Value, GenesisState, Header) {
    dev_genesis_for(dev::DevChain::default(), extra)
}

/// `dev_genesis` for the dev chain `chain` (its fork, its genesis extraData).
pub(crate) fn dev_genesis_for(
    chain: dev::DevChain,
    extra: serde_json::Value,
) -> (serde_json::Value, GenesisState, Header) {
    let mut genesis = serde_json::json!({ "config": { "chainId": 901 }, "alloc": {} });
    dev::optimism_genesis_for(&mut genesis, chain).unwrap();
    // The test's accounts go in last: they may replace a predeploy's entry.
    let entries = extra.as_object().expect("address -> account").clone();
    genesis["alloc"].as_object_mut().expect("an alloc").extend(entries);
    let accounts = alloc(&genesis).unwrap();
    let (root, trie) = state_root(&Empty, &alloc_updates(&accounts)).unwrap();
    let state =
        GenesisState { accounts: accounts.into_iter().map(|a| (a.address, a)).collect::<HashMap<_, _>>(), trie };
    let header = Header {
        number: 0,
        gas_limit: 30_000_000,
        base_fee_per_gas: Some(1_000_000_000),
        state_root: root,
        extra_data: match genesis.get("extraData").and_then(|e| e.as_str()) {
            Some(hex) => hex.parse().unwrap(),
            None => Bytes::from(vec![0, 0, 0, 0, 250, 0, 0, 0, 6]),
        },
        ..Default::default()
    };
    (genesis, state, header)
}

pub(crate) fn attributes(timestamp: u64) -> Attributes {
    Attributes {
        timestamp,
        prev_randao: B256::repeat_byte(7),
        fee_recipient: dev::SEQUENCER_FEE_VAULT,
        parent_beacon_block_root: Some(B256::ZERO),
        gas_limit: 30_000_000,
        transactions: Vec::new(),
        eip1559_params: None,
        min_base_fee: None,
    }
}

/// An EIP-1559 call from `signer` on chain 901, paying up to twice `base_fee`.
pub(crate) fn call(signer: &PrivateKeySigner, nonce: u64, to: Address, input: Bytes, base_fee: u64) -> OpTx {
    let tx = TxEip1559 {
        chain_id: 901,
        nonce,
        gas_limit: 200_000,
        max_fee_per_gas: 2 * base_fee as u128,
        max_priority_fee_per_gas: 1_000,
        to: TxKind::Call(to),
        value: U256::ZERO,
        input,
        ..Default::default()
    };
    let signature = signer.sign_hash_sync(&tx.signature_hash()).unwrap();
    OpTx::Eth(TxEnvelope::Eip1559(tx.into_signed(signature)))
}

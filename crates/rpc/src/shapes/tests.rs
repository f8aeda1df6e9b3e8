//! Each mirror against the type it mirrors, both ways. Mirror -> JSON -> Rust type must give
//! the fully populated Rust value (a key the Rust type does not read, or reads into another
//! field, leaves a field unset). Rust value -> JSON -> mirror must give the fully populated
//! mirror (`deny_unknown_fields`: a key the mirror lacks fails). The Rust values are struct
//! literals without `..Default::default()`, so a field alloy adds stops this file compiling.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;

use alloy_eips::eip2930::{AccessList, AccessListItem};
use alloy_eips::eip4895::Withdrawal as AlloyWithdrawal;
use alloy_eips::eip7702::{Authorization as AlloyAuthorization, SignedAuthorization};
use alloy_primitives::{address, b256, bytes, Address, TxKind, B256, U256};
use alloy_rpc_types_eth::state::{AccountOverride as AlloyAccountOverride, StateOverride};
use alloy_rpc_types_eth::{
    BlockNumberOrTag, BlockOverrides as AlloyBlockOverrides, Filter, FilterBlockOption, TransactionInput,
    TransactionRequest,
};
use alloy_rpc_types_trace::geth::{
    GethDebugBuiltInTracerType, GethDebugTracerConfig, GethDebugTracerType, GethDebugTracingOptions,
    GethDefaultTracingOptions,
};
use preconf_chain::exec::simulate::{SimBlock, SimBlockOverrides as ChainSimBlockOverrides, SimulatePayload};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::*;
use crate::params::TraceOptionsParam;

const A1: Address = address!("0x1111111111111111111111111111111111111111");
const A2: Address = address!("0x2222222222222222222222222222222222222222");
const H1: B256 = b256!("0x3333333333333333333333333333333333333333333333333333333333333333");
const H2: B256 = b256!("0x4444444444444444444444444444444444444444444444444444444444444444");

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// The two checks every mirror passes.
fn both_ways<M, R>(mirror: &M, rust: &R)
where
    M: Serialize + DeserializeOwned + PartialEq + Debug,
    R: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let sent = serde_json::to_value(mirror).unwrap();
    let read: R = serde_json::from_value(sent.clone()).unwrap_or_else(|e| panic!("{e}: {sent}"));
    assert_eq!(&read, rust, "the Rust type reads every field of the mirror into the same value");
    let written = serde_json::to_value(rust).unwrap();
    let back: M = serde_json::from_value(written.clone()).unwrap_or_else(|e| panic!("{e}: {written}"));
    assert_eq!(&back, mirror, "the mirror reads every field the Rust type writes");
}

fn tx_mirror() -> TransactionCall {
    TransactionCall {
        from: s("0x1111111111111111111111111111111111111111"),
        to: s("0x2222222222222222222222222222222222222222"),
        gas_price: s("0x1"),
        max_fee_per_gas: s("0x2"),
        max_priority_fee_per_gas: s("0x3"),
        max_fee_per_blob_gas: s("0x4"),
        gas: s("0x5208"),
        value: s("0xde0b6b3a7640000"),
        input: s("0xabcd"),
        nonce: s("0x7"),
        chain_id: s("0x539"),
        access_list: Some(vec![access_entry_mirror()]),
        transaction_type: s("0x4"),
        blob_versioned_hashes: Some(vec!["0x3333333333333333333333333333333333333333333333333333333333333333".into()]),
        authorization_list: Some(vec![Authorization {
            chain_id: "0x539".into(),
            address: "0x1111111111111111111111111111111111111111".into(),
            nonce: "0x9".into(),
            y_parity: "0x1".into(),
            r: "0xa".into(),
            s: "0xb".into(),
        }]),
    }
}

fn access_entry_mirror() -> AccessListEntry {
    AccessListEntry {
        address: "0x2222222222222222222222222222222222222222".into(),
        storage_keys: vec!["0x4444444444444444444444444444444444444444444444444444444444444444".into()],
    }
}

fn tx_rust() -> TransactionRequest {
    TransactionRequest {
        from: Some(A1),
        to: Some(TxKind::Call(A2)),
        gas_price: Some(1),
        max_fee_per_gas: Some(2),
        max_priority_fee_per_gas: Some(3),
        max_fee_per_blob_gas: Some(4),
        gas: Some(21_000),
        value: Some(U256::from(1_000_000_000_000_000_000u128)),
        // `data` is input's legacy name: the edge sends `input` only.
        input: TransactionInput { input: Some(bytes!("abcd")), data: None },
        nonce: Some(7),
        chain_id: Some(1337),
        access_list: Some(AccessList(vec![AccessListItem { address: A2, storage_keys: vec![H2] }])),
        transaction_type: Some(4),
        blob_versioned_hashes: Some(vec![H1]),
        // Blobs are never sent: calls and dev sends carry versioned hashes only.
        sidecar: None,
        authorization_list: Some(vec![SignedAuthorization::new_unchecked(
            AlloyAuthorization { chain_id: U256::from(1337), address: A1, nonce: 9 },
            1,
            U256::from(10),
            U256::from(11),
        )]),
    }
}

#[test]
fn transaction_call_is_alloys_transaction_request() {
    both_ways(&tx_mirror(), &tx_rust());
}

#[test]
fn access_list_entry_is_alloys_access_list_item() {
    both_ways(&access_entry_mirror(), &AccessListItem { address: A2, storage_keys: vec![H2] });
}

fn account_mirror() -> AccountOverride {
    let slots = HashMap::from([(
        "0x3333333333333333333333333333333333333333333333333333333333333333".to_string(),
        "0x4444444444444444444444444444444444444444444444444444444444444444".to_string(),
    )]);
    AccountOverride {
        balance: s("0x64"),
        nonce: s("0x2"),
        code: s("0x6000"),
        state: Some(slots.clone()),
        state_diff: Some(slots),
        move_precompile_to_address: s("0x2222222222222222222222222222222222222222"),
    }
}

fn account_rust() -> AlloyAccountOverride {
    AlloyAccountOverride {
        balance: Some(U256::from(100)),
        nonce: Some(2),
        code: Some(bytes!("6000")),
        state: Some([(H1, H2)].into_iter().collect()),
        state_diff: Some([(H1, H2)].into_iter().collect()),
        move_precompile_to: Some(A2),
    }
}

fn state_mirror() -> StateOverrides {
    HashMap::from([("0x1111111111111111111111111111111111111111".to_string(), account_mirror())])
}

fn state_rust() -> StateOverride {
    [(A1, account_rust())].into_iter().collect()
}

#[test]
fn account_override_is_alloys() {
    both_ways(&account_mirror(), &account_rust());
    both_ways(&state_mirror(), &state_rust());
}

fn block_mirror() -> BlockOverrides {
    BlockOverrides {
        number: s("0x10"),
        difficulty: s("0x11"),
        time: s("0x12"),
        gas_limit: s("0x13"),
        fee_recipient: s("0x1111111111111111111111111111111111111111"),
        prev_randao: s("0x3333333333333333333333333333333333333333333333333333333333333333"),
        base_fee_per_gas: s("0x14"),
        blob_base_fee: s("0x15"),
        beacon_root: s("0x4444444444444444444444444444444444444444444444444444444444444444"),
        block_hash: Some(HashMap::from([(
            "1".to_string(),
            "0x3333333333333333333333333333333333333333333333333333333333333333".to_string(),
        )])),
    }
}

fn block_rust() -> AlloyBlockOverrides {
    AlloyBlockOverrides {
        number: Some(U256::from(0x10)),
        difficulty: Some(U256::from(0x11)),
        time: Some(0x12),
        gas_limit: Some(0x13),
        coinbase: Some(A1),
        random: Some(H1),
        base_fee: Some(U256::from(0x14)),
        blob_base_fee: Some(U256::from(0x15)),
        beacon_root: Some(H2),
        block_hash: Some(BTreeMap::from([(1, H1)])),
    }
}

#[test]
fn block_overrides_is_alloys() {
    both_ways(&block_mirror(), &block_rust());
}

fn sim_block_overrides_mirror() -> SimBlockOverrides {
    let b = block_mirror();
    SimBlockOverrides {
        number: b.number,
        difficulty: b.difficulty,
        time: b.time,
        gas_limit: b.gas_limit,
        fee_recipient: b.fee_recipient,
        prev_randao: b.prev_randao,
        base_fee_per_gas: b.base_fee_per_gas,
        blob_base_fee: b.blob_base_fee,
        beacon_root: b.beacon_root,
        withdrawals: Some(vec![withdrawal_mirror()]),
    }
}

fn withdrawal_mirror() -> Withdrawal {
    Withdrawal {
        index: "0x1".into(),
        validator_index: "0x2".into(),
        address: "0x2222222222222222222222222222222222222222".into(),
        amount: "0x3".into(),
    }
}

fn withdrawal_rust() -> AlloyWithdrawal {
    AlloyWithdrawal { index: 1, validator_index: 2, address: A2, amount: 3 }
}

fn sim_block_overrides_rust() -> ChainSimBlockOverrides {
    // `blockHash` cannot be read through the chain's `flatten` (number keys): not in the mirror.
    let header = AlloyBlockOverrides { block_hash: None, ..block_rust() };
    ChainSimBlockOverrides { header, withdrawals: Some(vec![withdrawal_rust()]) }
}

#[test]
fn simulation_shapes_are_the_chains() {
    both_ways(&withdrawal_mirror(), &withdrawal_rust());
    both_ways(&sim_block_overrides_mirror(), &sim_block_overrides_rust());
    let block = SimulationBlock {
        calls: vec![tx_mirror()],
        state_overrides: Some(state_mirror()),
        block_overrides: Some(sim_block_overrides_mirror()),
    };
    let chain_block = SimBlock {
        calls: vec![tx_rust()],
        state_overrides: Some(state_rust()),
        block_overrides: Some(sim_block_overrides_rust()),
    };
    let payload = SimulationPayload {
        block_state_calls: vec![block],
        trace_transfers: true,
        validation: true,
        return_full_transactions: true,
    };
    let chain_payload = SimulatePayload {
        block_state_calls: vec![chain_block],
        trace_transfers: true,
        validation: true,
        return_full_transactions: true,
    };
    both_ways(&payload, &chain_payload);
}

#[test]
fn trace_config_is_the_trace_options_param() {
    let mirror = TraceConfig {
        enable_memory: Some(true),
        disable_memory: Some(false),
        disable_stack: Some(true),
        disable_storage: Some(false),
        enable_return_data: Some(true),
        disable_return_data: Some(false),
        debug: Some(true),
        limit: Some(10),
        tracer: s("callTracer"),
        tracer_config: Some(HashMap::from([("onlyTopCall".to_string(), true), ("withLog".to_string(), false)])),
        timeout_ms: Some(1500),
    };
    let rust = TraceOptionsParam {
        tracing: GethDebugTracingOptions {
            config: GethDefaultTracingOptions {
                enable_memory: Some(true),
                disable_memory: Some(false),
                disable_stack: Some(true),
                disable_storage: Some(false),
                enable_return_data: Some(true),
                disable_return_data: Some(false),
                debug: Some(true),
                limit: Some(10),
            },
            tracer: Some(GethDebugTracerType::BuiltInTracer(GethDebugBuiltInTracerType::CallTracer)),
            tracer_config: GethDebugTracerConfig(serde_json::json!({ "onlyTopCall": true, "withLog": false })),
            // geth's Go duration is parsed by the edge into `timeoutMs`; the chain reads that.
            timeout: None,
        },
        timeout_ms: Some(1500),
    };
    both_ways(&mirror, &rust);
}

/// alloy keeps addresses and topics in sets: the mirror's lists come back in any order.
fn sorted(mut f: LogFilter) -> LogFilter {
    if let Some(a) = f.address.as_mut() {
        a.sort();
    }
    for t in f.topics.iter_mut().flatten().flatten() {
        t.sort();
    }
    f
}

#[test]
fn log_filter_is_alloys_filter() {
    let topics = || Some(vec![Some(vec![hex(H1), hex(H2)]); 4]);
    let addresses = || Some(vec![hex(A1), hex(A2)]);
    let cases = [
        (
            LogFilter {
                from_block: s("0x1"),
                to_block: s("0x2"),
                block_hash: None,
                address: addresses(),
                topics: topics(),
            },
            FilterBlockOption::Range {
                from_block: Some(BlockNumberOrTag::Number(1)),
                to_block: Some(BlockNumberOrTag::Number(2)),
            },
        ),
        (
            LogFilter {
                from_block: None,
                to_block: None,
                block_hash: Some(hex(H1)),
                address: addresses(),
                topics: topics(),
            },
            FilterBlockOption::AtBlockHash(H1),
        ),
    ];
    for (mirror, block_option) in cases {
        let rust =
            Filter { block_option, address: vec![A1, A2].into(), topics: std::array::from_fn(|_| vec![H1, H2].into()) };
        let read: Filter = serde_json::from_value(serde_json::to_value(&mirror).unwrap()).unwrap();
        assert_eq!(read, rust, "alloy reads every field of the mirror");
        let back: LogFilter = serde_json::from_value(serde_json::to_value(&rust).unwrap()).unwrap();
        assert_eq!(sorted(back), mirror, "the mirror reads every field alloy writes");
    }
}

fn hex(v: impl std::fmt::LowerHex) -> String {
    format!("{v:#x}")
}

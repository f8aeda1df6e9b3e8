//! `anvil_nodeInfo` and `anvil_metadata` in anvil's shapes: quantities as hex except
//! timestamps, block numbers and the chain id where anvil writes JSON numbers. The fork
//! fields are null on a chain of its own; on a fork they name the fork block and the
//! upstream (its URL without what may be a secret: `ForkSettings::url`).

use std::collections::BTreeMap;

use alloy_primitives::{B256, U256};
use preconf_chain::api::node::NodeInfo;
use preconf_chain::dev::requests::DevMetadata;
use preconf_chain::fork::{ForkPoint, ForkSettings};
use preconf_chain::node::{CLIENT_SEMVER, CLIENT_VERSION};
use serde::Serialize;

use super::to_json;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AnvilNodeInfo {
    #[serde(with = "alloy_serde::quantity")]
    current_block_number: u64,
    current_block_timestamp: u64,
    current_block_hash: B256,
    hard_fork: &'static str,
    /// The builder takes the highest tip first (pool/mod.rs `BestTxs`): anvil's "fees".
    transaction_order: &'static str,
    environment: Environment,
    fork_config: ForkConfig,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Environment {
    #[serde(with = "alloy_serde::quantity")]
    base_fee: u128,
    chain_id: u64,
    #[serde(with = "alloy_serde::quantity")]
    gas_limit: u64,
    #[serde(with = "alloy_serde::quantity")]
    gas_price: u128,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ForkConfig {
    fork_url: Option<String>,
    fork_block_number: Option<u64>,
    fork_retry_backoff: Option<u64>,
}

/// The fork a node runs on: its upstream's settings and the fork block.
pub type Fork<'a> = Option<(&'a ForkSettings, &'a ForkPoint)>;

pub fn node_info(info: &NodeInfo, fork: Fork) -> String {
    to_json(&AnvilNodeInfo {
        current_block_number: info.head_number,
        current_block_timestamp: info.head_timestamp,
        current_block_hash: info.head_hash,
        hard_fork: info.spec.into(),
        transaction_order: "fees",
        environment: Environment {
            // Before London there is none: anvil reports 0.
            base_fee: info.base_fee.unwrap_or_default().into(),
            chain_id: info.chain_id,
            gas_limit: info.gas_limit,
            gas_price: info.gas_price,
        },
        fork_config: ForkConfig {
            fork_url: fork.map(|(s, _)| s.url.clone()),
            fork_block_number: fork.map(|(_, p)| p.header.number),
            fork_retry_backoff: fork.map(|(s, _)| s.retry_backoff_ms),
        },
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AnvilMetadata {
    client_version: &'static str,
    client_semver: &'static str,
    /// Not known to the build: null.
    client_commit_sha: Option<String>,
    chain_id: u64,
    instance_id: B256,
    latest_block_number: u64,
    latest_block_hash: B256,
    forked_network: Option<ForkedNetwork>,
    /// Snapshot id (hex) -> [its head's number, its head's hash].
    snapshots: BTreeMap<U256, (u64, B256)>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ForkedNetwork {
    chain_id: u64,
    fork_block_number: u64,
    fork_block_hash: B256,
}

/// `anvil_metadata` (also `hardhat_metadata`) for the newest sealed block `latest`.
pub fn metadata(chain_id: u64, latest: (u64, B256), m: &DevMetadata, fork: Fork) -> String {
    to_json(&AnvilMetadata {
        client_version: CLIENT_VERSION,
        client_semver: CLIENT_SEMVER,
        client_commit_sha: None,
        chain_id,
        instance_id: m.instance_id,
        latest_block_number: latest.0,
        latest_block_hash: latest.1,
        forked_network: fork.map(|(_, p)| ForkedNetwork {
            chain_id: p.chain_id,
            fork_block_number: p.header.number,
            fork_block_hash: p.hash,
        }),
        snapshots: m.snapshots.iter().map(|(id, number, hash)| (U256::from(*id), (*number, *hash))).collect(),
    })
}

//! `anvil_nodeInfo` in anvil's shape: quantities as hex except the timestamp and chain id
//! (JSON numbers, as anvil writes them), the pool's order, and a fork configuration that is
//! all null because this node forks no other chain.

use alloy_primitives::B256;
use preconf_chain::api::node::NodeInfo;
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

pub fn node_info(info: &NodeInfo) -> String {
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
        fork_config: ForkConfig { fork_url: None, fork_block_number: None, fork_retry_backoff: None },
    })
}

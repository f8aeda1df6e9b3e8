//! eth_getProof's result (EIP-1186) as alloy's `EIP1186AccountProofResponse`.

use alloy_primitives::{Address, KECCAK256_EMPTY};
use alloy_rpc_types_eth::{EIP1186AccountProofResponse, EIP1186StorageProof};
use alloy_trie::EMPTY_ROOT_HASH;
use preconf_trie::AccountProof;

use super::to_json;

/// `keys` are the storage keys as the request named them (echoed back, as geth does).
pub fn account_proof(address: Address, keys: Vec<alloy_serde::storage::JsonStorageKey>, proof: AccountProof) -> String {
    let account = proof.account;
    let storage_proof = keys
        .into_iter()
        .zip(proof.storage)
        .map(|(key, s)| EIP1186StorageProof { key, value: s.value, proof: s.proof })
        .collect();
    to_json(&EIP1186AccountProofResponse {
        address,
        balance: account.map(|a| a.balance).unwrap_or_default(),
        code_hash: account.map_or(KECCAK256_EMPTY, |a| a.code_hash),
        nonce: account.map(|a| a.nonce).unwrap_or_default(),
        storage_hash: account.map_or(EMPTY_ROOT_HASH, |a| a.storage_root),
        account_proof: proof.proof,
        storage_proof,
    })
}

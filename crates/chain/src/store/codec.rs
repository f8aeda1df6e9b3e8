//! Byte layouts of keys and values in the store.

use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_rlp::{Decodable, Encodable, RlpDecodable, RlpEncodable};

use crate::changes::AccountState;

/// A transaction as stored in a block body: its EIP-2718 bytes and the recovered sender.
#[derive(Clone, Debug, RlpEncodable, RlpDecodable)]
pub struct StoredTx {
    pub raw: Bytes,
    pub sender: Address,
}

/// A block body: transactions with their senders, uncle headers (proof-of-work chains)
/// and withdrawals (Shanghai on).
#[derive(Clone, Debug, Default, RlpEncodable, RlpDecodable)]
pub struct StoredBody {
    pub txs: Vec<StoredTx>,
    pub ommers: Vec<alloy_consensus::Header>,
    pub withdrawals: Vec<alloy_eips::eip4895::Withdrawal>,
}

/// Receipts as EIP-2718 encoded consensus receipts (status, cumulative gas, bloom, logs).
#[derive(Clone, Debug, Default, RlpEncodable, RlpDecodable)]
pub struct StoredReceipts {
    pub receipts: Vec<Bytes>,
}

pub fn encode<T: Encodable>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.length());
    value.encode(&mut out);
    out
}

pub fn decode<T: Decodable>(mut bytes: &[u8]) -> Option<T> {
    T::decode(&mut bytes).ok()
}

pub fn u64_from(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[..8]);
    u64::from_be_bytes(b)
}

pub fn account_key(address: &Address, block: u64) -> [u8; 28] {
    let mut k = [0u8; 28];
    k[..20].copy_from_slice(address.as_slice());
    k[20..].copy_from_slice(&block.to_be_bytes());
    k
}

pub fn storage_key(address: &Address, slot: &U256, block: u64) -> [u8; 60] {
    let mut k = [0u8; 60];
    k[..20].copy_from_slice(address.as_slice());
    k[20..52].copy_from_slice(&slot.to_be_bytes::<32>());
    k[52..].copy_from_slice(&block.to_be_bytes());
    k
}

pub fn tx_location(block: u64, index: u32) -> [u8; 12] {
    let mut k = [0u8; 12];
    k[..8].copy_from_slice(&block.to_be_bytes());
    k[8..].copy_from_slice(&index.to_be_bytes());
    k
}

pub fn decode_tx_location(bytes: &[u8; 12]) -> (u64, u32) {
    let mut i = [0u8; 4];
    i.copy_from_slice(&bytes[8..]);
    (u64_from(bytes), u32::from_be_bytes(i))
}

/// nonce (8) | balance (32) | code hash (32); an empty value means "does not exist".
pub fn encode_account(state: &AccountState) -> Vec<u8> {
    let mut v = Vec::with_capacity(72);
    v.extend_from_slice(&state.nonce.to_be_bytes());
    v.extend_from_slice(&state.balance.to_be_bytes::<32>());
    v.extend_from_slice(state.code_hash.as_slice());
    v
}

pub fn decode_account(bytes: &[u8]) -> Option<AccountState> {
    if bytes.len() != 72 {
        return None;
    }
    Some(AccountState {
        nonce: u64_from(&bytes[..8]),
        balance: U256::from_be_slice(&bytes[8..40]),
        code_hash: B256::from_slice(&bytes[40..72]),
    })
}

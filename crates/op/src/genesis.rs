//! An OP chain's genesis as op-geth and the superchain registry publish it: the alloc (keys
//! with or without 0x) and the header fields. Its config may be `null` (the registry's
//! files): the OP config then comes from op-node's rollup.json or the registry's TOML.

use alloy_consensus::constants::EMPTY_OMMER_ROOT_HASH;
use alloy_consensus::{Header, EMPTY_ROOT_HASH};
use alloy_primitives::{keccak256, Address, Bytes, B256, B64, U256};
use preconf_trie::{AccountFields, AccountUpdate};
use serde_json::Value;

/// One genesis account.
#[derive(Clone, Debug, Default)]
pub struct GenesisAccount {
    pub address: Address,
    pub nonce: u64,
    pub balance: U256,
    pub code: Bytes,
    pub storage: Vec<(B256, U256)>,
}

#[derive(Debug, thiserror::Error)]
pub enum GenesisError {
    #[error("genesis field {0} is missing or malformed")]
    Field(String),
}

fn quantity(v: &Value, name: &str) -> Result<u64, GenesisError> {
    match v.get(name) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Number(n)) => n.as_u64().ok_or_else(|| GenesisError::Field(name.into())),
        Some(Value::String(s)) => {
            u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| GenesisError::Field(name.into()))
        }
        _ => Err(GenesisError::Field(name.into())),
    }
}

fn parse<T: std::str::FromStr>(s: &str, name: &str) -> Result<T, GenesisError> {
    s.parse().map_err(|_| GenesisError::Field(name.into()))
}

/// The accounts of `genesis.alloc`.
pub fn alloc(genesis: &Value) -> Result<Vec<GenesisAccount>, GenesisError> {
    let alloc = genesis.get("alloc").and_then(Value::as_object).ok_or_else(|| GenesisError::Field("alloc".into()))?;
    let mut out = Vec::with_capacity(alloc.len());
    for (key, account) in alloc {
        let key = key.strip_prefix("0x").unwrap_or(key);
        let address: Address = parse(key, "alloc address")?;
        let balance = match account.get("balance").and_then(Value::as_str) {
            Some(b) => parse::<U256>(b, "balance")?,
            None => U256::ZERO,
        };
        let code = match account.get("code").and_then(Value::as_str) {
            Some(c) => parse::<Bytes>(c, "code")?,
            None => Bytes::new(),
        };
        let mut storage = Vec::new();
        if let Some(slots) = account.get("storage").and_then(Value::as_object) {
            for (slot, value) in slots {
                let value: U256 = parse::<B256>(value.as_str().unwrap_or_default(), "storage value")?.into();
                storage.push((parse::<B256>(slot, "storage slot")?, value));
            }
        }
        out.push(GenesisAccount { address, nonce: quantity(account, "nonce")?, balance, code, storage });
    }
    Ok(out)
}

/// The genesis accounts as one state-trie update (zero storage values are not stored).
pub fn alloc_updates(accounts: &[GenesisAccount]) -> Vec<AccountUpdate> {
    accounts
        .iter()
        .map(|a| AccountUpdate {
            hashed_address: keccak256(a.address),
            account: Some(AccountFields {
                nonce: a.nonce,
                balance: a.balance,
                code_hash: if a.code.is_empty() { alloy_primitives::KECCAK256_EMPTY } else { keccak256(&a.code) },
            }),
            storage_wiped: false,
            storage: a.storage.iter().filter(|(_, v)| !v.is_zero()).map(|(k, v)| (keccak256(k), *v)).collect(),
        })
        .collect()
}

/// The genesis header. OP chains start at London or later: a base fee always; the fork
/// fields of later forks where the genesis file carries them.
pub fn header(genesis: &Value, state_root: B256) -> Result<Header, GenesisError> {
    let str_field = |name: &str| genesis.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
    let b256 = |name: &str| -> Result<B256, GenesisError> {
        match genesis.get(name).and_then(Value::as_str) {
            Some(s) => parse(s, name),
            None => Ok(B256::ZERO),
        }
    };
    let optional = |name: &str| -> Result<Option<u64>, GenesisError> {
        match genesis.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => quantity(genesis, name).map(Some),
        }
    };
    Ok(Header {
        parent_hash: b256("parentHash")?,
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: parse(&str_field("coinbase"), "coinbase")?,
        state_root,
        transactions_root: EMPTY_ROOT_HASH,
        receipts_root: EMPTY_ROOT_HASH,
        logs_bloom: Default::default(),
        difficulty: U256::from(quantity(genesis, "difficulty")?),
        number: quantity(genesis, "number")?,
        gas_limit: quantity(genesis, "gasLimit")?,
        gas_used: quantity(genesis, "gasUsed")?,
        timestamp: quantity(genesis, "timestamp")?,
        extra_data: parse(&str_field("extraData"), "extraData").unwrap_or_default(),
        mix_hash: b256("mixHash")?,
        nonce: B64::from(quantity(genesis, "nonce")?),
        base_fee_per_gas: Some(optional("baseFeePerGas")?.unwrap_or(1_000_000_000)),
        withdrawals_root: None,
        blob_gas_used: optional("blobGasUsed")?,
        excess_blob_gas: optional("excessBlobGas")?,
        parent_beacon_block_root: None,
        requests_hash: None,
        ..Default::default()
    })
}

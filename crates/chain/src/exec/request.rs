//! Call requests and overrides as the TypeScript side hands them over (already validated
//! there; a parse failure here is still reported as invalid params, never a panic).

use std::collections::BTreeMap;

use alloy_eips::eip2930::AccessList;
use alloy_eips::eip7702::SignedAuthorization;
use alloy_primitives::{Address, Bytes, B256, U256, U64};
use revm::bytecode::Bytecode;
use revm::context::TxEnv;
use revm::database::CacheDB;
use revm::database_interface::DatabaseRef;
use revm::primitives::TxKind;
use revm::state::AccountInfo;
use serde::Deserialize;

use crate::error::{ChainError, ChainResult};

/// geth's TransactionArgs.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRequest {
    pub from: Option<Address>,
    pub to: Option<Address>,
    pub gas: Option<U64>,
    pub gas_price: Option<U256>,
    pub max_fee_per_gas: Option<U256>,
    pub max_priority_fee_per_gas: Option<U256>,
    pub max_fee_per_blob_gas: Option<U256>,
    pub value: Option<U256>,
    pub nonce: Option<U64>,
    pub input: Option<Bytes>,
    pub access_list: Option<AccessList>,
    pub authorization_list: Option<Vec<SignedAuthorization>>,
    pub blob_versioned_hashes: Option<Vec<B256>>,
    pub chain_id: Option<U64>,
    #[serde(rename = "type")]
    pub tx_type: Option<U64>,
}

fn u128_of(v: U256, what: &str) -> ChainResult<u128> {
    u128::try_from(v).map_err(|_| ChainError::InvalidParams(format!("{what} does not fit 128 bits")))
}

impl CallRequest {
    pub fn sender(&self) -> Address {
        self.from.unwrap_or_default()
    }

    /// The transaction type geth would infer from the fields given.
    pub fn inferred_type(&self) -> u8 {
        if let Some(t) = self.tx_type {
            return t.to::<u8>();
        }
        if self.authorization_list.is_some() {
            4
        } else if self.blob_versioned_hashes.is_some() {
            3
        } else if self.max_fee_per_gas.is_some() || self.max_priority_fee_per_gas.is_some() {
            2
        } else if self.access_list.is_some() {
            1
        } else if self.gas_price.is_some() {
            0
        } else {
            2
        }
    }

    /// The revm transaction for a call with `gas` and `nonce` already decided.
    /// Fee fields default to zero: a call without a price pays nothing, as in geth.
    pub fn to_tx_env(&self, chain_id: u64, gas: u64, nonce: u64, base_fee: Option<u64>) -> ChainResult<TxEnv> {
        let tx_type = self.inferred_type();
        let (gas_price, priority) = match (self.gas_price, self.max_fee_per_gas, self.max_priority_fee_per_gas) {
            (Some(p), _, _) => (u128_of(p, "gasPrice")?, None),
            (None, Some(max), tip) => {
                let tip = tip.map(|t| u128_of(t, "maxPriorityFeePerGas")).transpose()?.unwrap_or(0);
                (u128_of(max, "maxFeePerGas")?, Some(tip))
            }
            (None, None, Some(tip)) => {
                // Only a tip: geth fills the fee cap from the base fee.
                let tip = u128_of(tip, "maxPriorityFeePerGas")?;
                (tip + base_fee.unwrap_or(0) as u128, Some(tip))
            }
            (None, None, None) => (0, if tx_type >= 2 { Some(0) } else { None }),
        };
        let mut env = TxEnv {
            tx_type,
            caller: self.sender(),
            gas_limit: gas,
            gas_price,
            gas_priority_fee: if tx_type >= 2 { Some(priority.unwrap_or(0)) } else { None },
            kind: match self.to {
                Some(to) => TxKind::Call(to),
                None => TxKind::Create,
            },
            value: self.value.unwrap_or_default(),
            data: self.input.clone().unwrap_or_default(),
            nonce,
            chain_id: Some(self.chain_id.map(|c| c.to::<u64>()).unwrap_or(chain_id)),
            access_list: self.access_list.clone().unwrap_or_default(),
            blob_hashes: self.blob_versioned_hashes.clone().unwrap_or_default(),
            max_fee_per_blob_gas: self
                .max_fee_per_blob_gas
                .map(|v| u128_of(v, "maxFeePerBlobGas"))
                .transpose()?
                .unwrap_or_default(),
            ..Default::default()
        };
        if let Some(auths) = &self.authorization_list {
            env.set_signed_authorization(auths.clone());
        }
        Ok(env)
    }
}

/// geth's OverrideAccount.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountOverride {
    pub balance: Option<U256>,
    pub nonce: Option<U64>,
    pub code: Option<Bytes>,
    pub state: Option<BTreeMap<B256, B256>>,
    pub state_diff: Option<BTreeMap<B256, B256>>,
    pub move_precompile_to_address: Option<Address>,
}

pub type StateOverrides = BTreeMap<Address, AccountOverride>;

/// geth's BlockOverrides.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockOverrides {
    pub number: Option<U64>,
    pub difficulty: Option<U256>,
    pub time: Option<U64>,
    pub gas_limit: Option<U64>,
    pub fee_recipient: Option<Address>,
    pub prev_randao: Option<B256>,
    pub base_fee_per_gas: Option<U256>,
    pub blob_base_fee: Option<U256>,
    pub beacon_root: Option<B256>,
    pub withdrawals: Option<Vec<alloy_eips::eip4895::Withdrawal>>,
}

/// Writes account overrides into a call's overlay database (balance, nonce, code, storage).
/// `movePrecompileToAddress` is handled by the caller, which owns the precompile set.
pub fn apply_state_overrides<DB: DatabaseRef<Error = ChainError>>(
    db: &mut CacheDB<DB>,
    overrides: &StateOverrides,
) -> ChainResult<()> {
    for (address, o) in overrides {
        if o.state.is_some() && o.state_diff.is_some() {
            return Err(ChainError::InvalidParams(format!("account {address} has both 'state' and 'stateDiff'")));
        }
        let mut info: AccountInfo = db.load_account(*address)?.info().unwrap_or_default();
        if let Some(b) = o.balance {
            info.balance = b;
        }
        if let Some(n) = o.nonce {
            info.nonce = n.to::<u64>();
        }
        if let Some(code) = &o.code {
            let bytecode = Bytecode::new_raw(code.clone());
            info.code_hash = bytecode.hash_slow();
            info.code = Some(bytecode);
        }
        db.insert_account_info(*address, info);
        if let Some(state) = &o.state {
            let slots = state.iter().map(|(k, v)| (U256::from_be_bytes(k.0), U256::from_be_bytes(v.0)));
            db.replace_account_storage(*address, slots.collect())?;
        }
        if let Some(diff) = &o.state_diff {
            for (k, v) in diff {
                db.insert_account_storage(*address, U256::from_be_bytes(k.0), U256::from_be_bytes(v.0))?;
            }
        }
    }
    Ok(())
}

pub fn parse<T: for<'de> Deserialize<'de>>(json: &str, what: &str) -> ChainResult<T> {
    serde_json::from_str(json).map_err(|e| ChainError::InvalidParams(format!("invalid {what}: {e}")))
}

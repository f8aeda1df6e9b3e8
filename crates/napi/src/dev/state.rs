//! The test methods that edit state: balances, nonces, code, storage, ERC-20 balances and
//! allowances, and state dumps and loads.

use alloy_primitives::{hex, U256};
use napi::bindgen_prelude::{Either, PromiseRaw};
use napi::Env;
use napi_derive::napi;
use preconf_chain::dev::erc20::Erc20Entry;
use preconf_chain::dev::requests::{AccountEdit, Balance};
use preconf_chain::InvalidParam;
use preconf_rpc::params;

use super::{data, u256};
use crate::failure::NativeFailure;
use crate::work::Class;
use crate::NativeNode;

#[napi]
impl NativeNode {
    /// anvil_setBalance (`add`: anvil_addBalance) with a 0x quantity.
    #[napi]
    pub fn dev_set_balance<'env>(
        &self,
        env: &'env Env,
        address: String,
        value: String,
        add: bool,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            let value = u256(&value)?;
            let mut edit = AccountEdit::new(params::address(&address)?);
            edit.balance = Some(if add { Balance::Add(value) } else { Balance::Set(value) });
            d.edit(vec![edit])?;
            Ok("null".into())
        })
    }

    #[napi]
    pub fn dev_set_nonce<'env>(
        &self,
        env: &'env Env,
        address: String,
        nonce: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            let mut edit = AccountEdit::new(params::address(&address)?);
            edit.nonce = Some(params::quantity(&nonce)?);
            d.edit(vec![edit])?;
            Ok("null".into())
        })
    }

    #[napi]
    pub fn dev_set_code<'env>(
        &self,
        env: &'env Env,
        address: String,
        code: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            let mut edit = AccountEdit::new(params::address(&address)?);
            edit.code = Some(data(&code)?);
            d.edit(vec![edit])?;
            Ok("null".into())
        })
    }

    /// anvil_setStorageAt: `slot` a canonical 32-byte key, `value` 32 bytes.
    #[napi]
    pub fn dev_set_storage_at<'env>(
        &self,
        env: &'env Env,
        address: String,
        slot: String,
        value: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            let mut edit = AccountEdit::new(params::address(&address)?);
            edit.storage = vec![(params::slot(&slot)?, U256::from_be_bytes(params::hash(&value)?.0))];
            d.edit(vec![edit])?;
            Ok("true".into())
        })
    }

    /// anvil_dealERC20: `account`'s balance of `token` (a 0x quantity), written where
    /// `balanceOf` reads it.
    #[napi]
    pub fn dev_deal_erc20<'env>(
        &self,
        env: &'env Env,
        account: String,
        token: String,
        amount: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Calls, move |d| {
            let entry = Erc20Entry::Balance { account: params::address(&account)? };
            d.set_erc20(params::address(&token)?, entry, u256(&amount)?)?;
            Ok("null".into())
        })
    }

    /// anvil_setERC20Allowance: what `spender` may take of `owner`'s `token`, written where
    /// `allowance` reads it.
    #[napi]
    pub fn dev_set_erc20_allowance<'env>(
        &self,
        env: &'env Env,
        owner: String,
        spender: String,
        token: String,
        amount: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Calls, move |d| {
            let entry = Erc20Entry::Allowance { owner: params::address(&owner)?, spender: params::address(&spender)? };
            d.set_erc20(params::address(&token)?, entry, u256(&amount)?)?;
            Ok("null".into())
        })
    }

    /// anvil_dumpState: 0x hex of the gzip of anvil's JSON state format.
    #[napi]
    pub fn dev_dump_state<'env>(
        &self,
        env: &'env Env,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Scans, |d| Ok(format!("\"0x{}\"", hex::encode(d.dump_state()?))))
    }

    /// anvil_loadState: 0x hex of a dump (gzip or plain JSON).
    #[napi]
    pub fn dev_load_state<'env>(
        &self,
        env: &'env Env,
        dump: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Scans, move |d| {
            let bytes = hex::decode(&dump).map_err(|_| InvalidParam::StateDumpHex)?;
            d.load_state(&bytes)?;
            Ok("true".into())
        })
    }
}

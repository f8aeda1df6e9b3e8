//! The test methods that edit state: balances, nonces, code, storage, ERC-20 balances and
//! allowances, and state dumps and loads.

use alloy_primitives::{hex, U256};
use preconf_chain::dev::erc20::Erc20Entry;
use preconf_chain::dev::requests::{AccountEdit, Balance};
use preconf_chain::InvalidParam;
use preconf_rpc::params;

use super::{data, dev, u256};
use crate::work::Class;
use crate::NativeNode;

work_methods! {
    #[doc = " anvil_setBalance (`add`: anvil_addBalance) with a 0x quantity."]
    fn dev_set_balance(address: String, value: String, add: bool) on Class::Submit, with dev => |d| {
        let value = u256(&value)?;
        let mut edit = AccountEdit::new(params::address(&address)?);
        edit.balance = Some(if add { Balance::Add(value) } else { Balance::Set(value) });
        d.edit(vec![edit])?;
        Ok("null".into())
    };

    fn dev_set_nonce(address: String, nonce: String) on Class::Submit, with dev => |d| {
        let mut edit = AccountEdit::new(params::address(&address)?);
        edit.nonce = Some(params::quantity(&nonce)?);
        d.edit(vec![edit])?;
        Ok("null".into())
    };

    fn dev_set_code(address: String, code: String) on Class::Submit, with dev => |d| {
        let mut edit = AccountEdit::new(params::address(&address)?);
        edit.code = Some(data(&code)?);
        d.edit(vec![edit])?;
        Ok("null".into())
    };

    #[doc = " anvil_setStorageAt: `slot` a canonical 32-byte key, `value` 32 bytes."]
    fn dev_set_storage_at(address: String, slot: String, value: String) on Class::Submit, with dev => |d| {
        let mut edit = AccountEdit::new(params::address(&address)?);
        edit.storage = vec![(params::slot(&slot)?, U256::from_be_bytes(params::hash(&value)?.0))];
        d.edit(vec![edit])?;
        Ok("true".into())
    };

    #[doc = " anvil_dealERC20: `account`'s balance of `token` (a 0x quantity), written where"]
    #[doc = " `balanceOf` reads it."]
    fn dev_deal_erc20(account: String, token: String, amount: String) on Class::Calls, with dev => |d| {
        let entry = Erc20Entry::Balance { account: params::address(&account)? };
        d.set_erc20(params::address(&token)?, entry, u256(&amount)?)?;
        Ok("null".into())
    };

    #[doc = " anvil_setERC20Allowance: what `spender` may take of `owner`'s `token`, written where"]
    #[doc = " `allowance` reads it."]
    fn dev_set_erc20_allowance(owner: String, spender: String, token: String, amount: String) on Class::Calls, with dev => |d| {
        let entry = Erc20Entry::Allowance { owner: params::address(&owner)?, spender: params::address(&spender)? };
        d.set_erc20(params::address(&token)?, entry, u256(&amount)?)?;
        Ok("null".into())
    };

    #[doc = " anvil_dumpState: 0x hex of the gzip of anvil's JSON state format."]
    fn dev_dump_state() on Class::Scans, with dev => |d| Ok(format!("\"0x{}\"", hex::encode(d.dump_state()?)));

    #[doc = " anvil_loadState: 0x hex of a dump (gzip or plain JSON)."]
    fn dev_load_state(dump: String) on Class::Scans, with dev => |d| {
        let bytes = hex::decode(&dump).map_err(|_| InvalidParam::StateDumpHex)?;
        d.load_state(&bytes)?;
        Ok("true".into())
    };
}

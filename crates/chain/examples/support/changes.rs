//! A pre-confirmation's state changes for the examples: `count` transactions from `first`,
//! each touching two new accounts and the coinbase.

use std::sync::Arc;

use alloy_primitives::{Address, B256, U256};
use preconf_chain::changes::{AccountChange, AccountState, StateChanges};

pub fn changes(first: u64, count: u64) -> Arc<StateChanges> {
    let mut c = StateChanges::default();
    for i in first..first + count {
        for who in [i * 2 + 100, i * 2 + 101, 0] {
            let info = Some(AccountState { nonce: i, balance: U256::from(i), code_hash: B256::ZERO });
            c.accounts
                .insert(Address::from_word(B256::from(U256::from(who))), AccountChange { info, ..Default::default() });
        }
    }
    Arc::new(c)
}

//! State edits (`anvil_setBalance`, `anvil_setCode`, `anvil_setStorageAt`, ...): applied to
//! the open block like a transaction's effects.

use alloy_primitives::{keccak256, KECCAK256_EMPTY};
use revm::bytecode::Bytecode;

use super::Builder;
use crate::changes::{AccountState, StateChanges};
use crate::dev::requests::{AccountEdit, Balance, Mining};
use crate::error::ChainResult;

impl Builder {
    /// Applies state edits to the open block and shows them. With automine (or without
    /// pre-confirmations, where `pending` is the head) they are sealed at once.
    pub(super) fn edit(&mut self, edits: &[AccountEdit]) -> ChainResult<()> {
        let b = &mut self.block;
        let db = b.evm.db();
        for edit in edits {
            let existing = db.load_account(edit.address)?.info();
            let mut info = existing.clone().unwrap_or_default();
            match edit.balance {
                Some(Balance::Set(v)) => info.balance = v,
                Some(Balance::Add(v)) => info.balance = info.balance.saturating_add(v),
                None => {}
            }
            if let Some(nonce) = edit.nonce {
                info.nonce = nonce;
            }
            if let Some(code) = &edit.code {
                (info.code_hash, info.code) = match code.is_empty() {
                    true => (KECCAK256_EMPTY, None),
                    false => (keccak256(code), Some(Bytecode::new_raw(code.clone()))),
                };
            }
            let state = AccountState { nonce: info.nonce, balance: info.balance, code_hash: info.code_hash };
            if existing.is_none() && state.is_empty() && edit.storage.is_empty() {
                continue; // an account that does not exist, left empty: nothing changes
            }
            db.insert_account_info(edit.address, info);
            for (slot, value) in &edit.storage {
                db.insert_account_storage(edit.address, *slot, *value)?;
            }
            for changes in [&mut b.changes, &mut b.tick] {
                record(changes, edit, state);
            }
            b.warm.changed(edit.address, edit.storage.iter().map(|(slot, _)| *slot));
        }
        let number = b.header.number;
        self.dev_mut().edited = Some(number);
        if self.dev_mut().mining == Mining::Auto || !self.chain.config().preconf {
            return self.seal_now();
        }
        self.bring_forward();
        Ok(())
    }
}

/// Records one edit in a change set, as a transaction's effects are recorded.
fn record(changes: &mut StateChanges, edit: &AccountEdit, state: AccountState) {
    let change = changes.accounts.entry(edit.address).or_default();
    change.info = Some(state);
    change.storage.extend(edit.storage.iter().copied());
    if let Some(code) = edit.code.as_ref().filter(|c| !c.is_empty()) {
        changes.codes.insert(state.code_hash, code.clone());
    }
}

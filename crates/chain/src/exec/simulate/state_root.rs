//! Real state roots for simulated blocks (`--profile geth`; the product's interface leaves
//! them zero, docs/compat.md). Everything the simulation changed so far — calls, system
//! calls, state overrides, withdrawals, and the pre-confirmed changes of a pending base —
//! is folded into one change set and hashed over the persisted trie of the base block, so
//! the cost is what the simulation touched, whatever the size of the state.

use alloy_primitives::{map::AddressSet, Address};
use revm::database::{AccountState as DbState, CacheDB};
use revm::primitives::hardfork::SpecId;

use crate::changes::{AccountChange, AccountState, StateChanges};
use crate::error::ChainResult;
use crate::state::StateView;
use crate::store::trie;

/// The state root after the simulation's changes in `db` on top of `base`. `written` names
/// accounts changed outside the EVM (overrides, withdrawals), which the cache does not mark.
pub fn simulated_state_root(
    base: &StateView,
    db: &CacheDB<StateView>,
    written: &AddressSet,
    spec_id: SpecId,
) -> ChainResult<alloy_primitives::B256> {
    let mut changes = StateChanges::default();
    if let Some(overlay) = &base.overlay {
        for layer in overlay.layers() {
            changes.extend((**layer).clone());
        }
    }
    changes.extend(cache_changes(db, written, spec_id));
    let tries = base.snapshot.trie();
    let (root, _) = trie::state_root(&tries.at(base.block)?, &changes)?;
    Ok(root)
}

/// The accounts the cache holds as written, as one change set. An account written but
/// left empty is removed from Spurious Dragon on (EIP-161), as geth's `Finalise` does.
fn cache_changes(db: &CacheDB<StateView>, written: &AddressSet, spec_id: SpecId) -> StateChanges {
    let clear_empty = spec_id.is_enabled_in(SpecId::SPURIOUS_DRAGON);
    let mut out = StateChanges::default();
    for (address, account) in &db.cache.accounts {
        let explicit = written.contains(address);
        let change = match &account.account_state {
            // Loaded and never written.
            DbState::None if !explicit => continue,
            DbState::NotExisting => AccountChange { info: None, storage: Default::default(), storage_wiped: true },
            state => {
                let info = &account.info;
                let fields = AccountState { nonce: info.nonce, balance: info.balance, code_hash: info.code_hash };
                let removed = clear_empty && fields.is_empty();
                AccountChange {
                    info: (!removed).then_some(fields),
                    storage: if removed { Default::default() } else { account.storage.clone().into_iter().collect() },
                    storage_wiped: removed || *state == DbState::StorageCleared,
                }
            }
        };
        out.accounts.insert(*address, change);
    }
    out
}

/// Addresses a block's state overrides and withdrawals write to.
pub fn written_by(
    overrides: Option<&alloy_rpc_types_eth::state::StateOverride>,
    withdrawals: &[alloy_eips::eip4895::Withdrawal],
) -> impl Iterator<Item = Address> {
    let overridden: Vec<Address> = overrides.map(|o| o.keys().copied().collect()).unwrap_or_default();
    overridden.into_iter().chain(withdrawals.iter().map(|w| w.address).collect::<Vec<_>>())
}

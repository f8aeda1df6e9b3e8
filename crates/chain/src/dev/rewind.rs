//! The chain read back from the store after it went back (`evm_revert`) or was wiped and
//! seeded again (`anvil_reset`): a view at the store's head, as the node opens one at start.

use std::sync::Arc;

use crate::chain_state::ChainState;
use crate::error::{ChainResult, InternalError};
use crate::genesis::seed::{file_source, open_genesis, GenesisSource};
use crate::state::CodeCache;
use crate::view::ChainView;

/// The store's head as a view with no block being built; a fresh code cache (a cache keyed
/// by code hash cannot go stale, but nothing it holds is needed any more).
pub fn view_at_store_head(chain: &ChainState) -> ChainResult<ChainView> {
    let snapshot = chain.store().snapshot()?;
    let number = snapshot.head().ok_or(InternalError::NoHead)?;
    let head = crate::api::blocks::load_block(&snapshot, number)?.ok_or(InternalError::MissingBlock(number))?;
    let finalized = snapshot.finalized().unwrap_or(number.saturating_sub(chain.config().finality_depth));
    Ok(ChainView { snapshot, finalized, head: Arc::new(head), pending: None, codes: Arc::new(CodeCache::default()) })
}

/// Where the genesis comes from again after a wipe: the embedded dev chain, or the genesis
/// the node was started with (a store keeps no alloc). `None`: the node was started on a
/// datadir of another chain without its genesis file, so it cannot be reset.
pub fn genesis_source(chain: &ChainState, is_dev: bool) -> Option<GenesisSource> {
    // A fork resets to its fork block (its cache of the upstream's state is kept).
    if chain.config().fork.is_some() {
        return chain.store().fork_point().ok().flatten().map(|p| GenesisSource::Fork(Box::new(p)));
    }
    match (&chain.config().genesis, &chain.config().genesis_file) {
        (Some(json), _) => Some(GenesisSource::Json(json.clone())),
        (None, Some(path)) => file_source(path.clone(), chain.config().chain_config_file.as_deref()).ok(),
        (None, None) if is_dev && chain.config().optimism => Some(GenesisSource::OpDev(chain.config().op_dev)),
        (None, None) if is_dev => Some(GenesisSource::Dev),
        (None, None) => None,
    }
}

/// Seeds the genesis into a wiped store.
pub fn seed(chain: &ChainState, source: &GenesisSource) -> ChainResult<()> {
    open_genesis(source, chain.store()).map(|_| ())
}

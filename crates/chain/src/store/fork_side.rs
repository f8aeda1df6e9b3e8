//! A forked chain's side of the store: the upstream that answers for what the tables
//! never held, the record of which fork the store holds, and the cache of what the
//! upstream answered (one table per fork, apart from the chain's own state, so local
//! writes never enter it and a restart on the same fork reads it back).

use std::sync::{Arc, Weak};

use alloy_primitives::{hex, keccak256};
use redb::{Durability, ReadableDatabase, TableDefinition, TableError};

use super::Store;
use crate::error::ChainResult;
use crate::fork::{ForkCache, ForkPoint, UpstreamState};

/// The fork the store holds (`ForkPoint` as JSON), written with its first block.
pub const META_FORK: &str = "fork";

/// The names of the fork caches' tables start with this (one table per fork).
pub(super) const FORK_CACHE_PREFIX: &str = "fork_cache_";

/// The upstream of a forked chain and the block it forked at.
#[derive(Clone)]
pub struct Upstream {
    pub source: Arc<dyn UpstreamState>,
    pub fork_block: u64,
}

impl Store {
    /// From now on, reads of what the store never held go to `upstream`.
    pub fn set_upstream(&self, upstream: Option<Upstream>) {
        *self.upstream.write() = upstream;
    }

    pub fn upstream(&self) -> Option<Upstream> {
        self.upstream.read().clone()
    }

    /// The fork this store holds, if it holds one.
    pub fn fork_point(&self) -> ChainResult<Option<ForkPoint>> {
        Ok(self.meta(META_FORK)?.and_then(|v| serde_json::from_slice(&v).ok()))
    }

    /// The cache of what `point`'s upstream answers, keyed by chain id, fork block hash and
    /// upstream: another fork of the same datadir never reads it.
    pub fn fork_cache(self: &Arc<Self>, point: &ForkPoint) -> Arc<dyn ForkCache> {
        let mut id = Vec::new();
        id.extend_from_slice(&point.chain_id.to_be_bytes());
        id.extend_from_slice(point.hash.as_slice());
        id.extend_from_slice(point.upstream.as_bytes());
        let table = format!("{FORK_CACHE_PREFIX}{}", hex::encode(&keccak256(&id)[..8]));
        Arc::new(StoreForkCache { store: Arc::downgrade(self), table })
    }

    fn side_get(&self, table: &str, key: &[u8]) -> ChainResult<Option<Vec<u8>>> {
        let txn = self.db.begin_read()?;
        let definition: TableDefinition<&[u8], &[u8]> = TableDefinition::new(table);
        match txn.open_table(definition) {
            Ok(t) => Ok(t.get(key)?.map(|v| v.value().to_vec())),
            Err(TableError::TableDoesNotExist(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Written without an fsync: it becomes durable with the next block's commit or at a
    /// clean stop; a crash loses only what can be fetched again.
    fn side_put(&self, table: &str, entries: &[(Vec<u8>, Vec<u8>)]) -> ChainResult<()> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::None)?;
        {
            let definition: TableDefinition<&[u8], &[u8]> = TableDefinition::new(table);
            let mut t = txn.open_table(definition)?;
            for (k, v) in entries {
                t.insert(k.as_slice(), v.as_slice())?;
            }
        }
        txn.commit()?;
        Ok(())
    }
}

struct StoreForkCache {
    /// Weak: the store holds the upstream source, which holds this cache.
    store: Weak<Store>,
    table: String,
}

impl ForkCache for StoreForkCache {
    fn get(&self, key: &[u8]) -> ChainResult<Option<Vec<u8>>> {
        match self.store.upgrade() {
            Some(store) => store.side_get(&self.table, key),
            None => Ok(None),
        }
    }

    fn put(&self, entries: &[(Vec<u8>, Vec<u8>)]) -> ChainResult<()> {
        match self.store.upgrade() {
            Some(store) => store.side_put(&self.table, entries),
            None => Ok(()),
        }
    }
}

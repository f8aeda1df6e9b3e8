//! Going back, for the test methods (`--dev`): savepoints of the whole store for
//! `evm_snapshot`/`evm_revert`, and wiping it for a new genesis (`anvil_reset`).
//!
//! A redb savepoint copies nothing: it keeps the pages of the store as they were from being
//! reused, and restoring it swaps the table root back and frees the pages written since. Both
//! cost what changed since the savepoint, never the size of the state (benches/RESULTS.md).
//! While a savepoint lives, pages freed after it are not reused, so the store grows with
//! what is written meanwhile; dropping the savepoint ends that.

use redb::{Durability, TableHandle};

use super::fork_side::FORK_CACHE_PREFIX;
use super::{create_tables, Store};
use crate::error::ChainResult;

/// The store as it was when the savepoint was taken; dropping it releases the pages it keeps.
pub struct StoreSavepoint(redb::Savepoint);

impl Store {
    /// Marks the store as it is now (every committed block) as a point to go back to.
    pub fn savepoint(&self) -> ChainResult<StoreSavepoint> {
        let mut txn = self.db.begin_write()?;
        // Nothing is written: no fsync to wait for. The savepoint is valid once this
        // (empty) transaction commits.
        txn.set_durability(Durability::None)?;
        let savepoint = txn.ephemeral_savepoint()?;
        txn.commit()?;
        Ok(StoreSavepoint(savepoint))
    }

    /// Puts the store back as it was at `savepoint`, durably; savepoints taken after it
    /// become invalid (the caller drops them).
    pub fn restore(&self, savepoint: &StoreSavepoint) -> ChainResult<()> {
        let mut txn = self.db.begin_write()?;
        txn.restore_savepoint(&savepoint.0)?;
        txn.commit()?;
        Ok(())
    }

    /// Deletes every table but a fork's caches and creates them empty, in one durable
    /// transaction: the store then holds no chain, and the caller seeds a genesis into it.
    pub fn wipe(&self) -> ChainResult<()> {
        let txn = self.db.begin_write()?;
        // A fork's cache of the upstream's state is not the chain's: the fork started again
        // (or another one, in its own table) reads it back instead of asking again.
        let tables: Vec<_> = txn.list_tables()?.filter(|t| !t.name().starts_with(FORK_CACHE_PREFIX)).collect();
        for table in tables {
            txn.delete_table(table)?;
        }
        let multimap: Vec<_> = txn.list_multimap_tables()?.collect();
        for table in multimap {
            txn.delete_multimap_table(table)?;
        }
        create_tables(&txn)?;
        txn.commit()?;
        Ok(())
    }
}

//! The `safe` and `finalized` blocks of an imported chain. A node that builds its own
//! blocks derives them (head, head minus `--finality-depth`); an imported chain names them,
//! as a consensus client's fork choice would, and the store keeps them until the next block
//! is written.

use redb::ReadableDatabase;

use super::{codec, Store, META, META_FINALIZED, META_SAFE};
use crate::error::{ChainResult, ConfigError};

impl Store {
    /// Names the `safe` and `finalized` blocks: `finalized <= safe <= head`.
    pub fn set_fork_choice(&self, safe: u64, finalized: u64) -> ChainResult<()> {
        let head = self.head()?.ok_or(ConfigError::NoChain)?;
        if safe > head || finalized > safe {
            return Err(ConfigError::ForkChoice { safe, finalized, head }.into());
        }
        let mut txn = self.db.begin_write()?;
        txn.set_durability(redb::Durability::Immediate)?;
        {
            let mut meta = txn.open_table(META)?;
            meta.insert(META_SAFE, safe.to_be_bytes().as_slice())?;
            meta.insert(META_FINALIZED, finalized.to_be_bytes().as_slice())?;
        }
        txn.commit()?;
        Ok(())
    }

    /// `(safe, finalized)` when an import named them.
    pub fn fork_choice(&self) -> ChainResult<Option<(u64, u64)>> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        let read = |key| -> ChainResult<Option<u64>> { Ok(meta.get(key)?.map(|v| codec::u64_from(v.value()))) };
        Ok(read(META_SAFE)?.zip(read(META_FINALIZED)?))
    }
}

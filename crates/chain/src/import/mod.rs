//! Importing blocks built by another client (`preconf-node import`): a blocks file of
//! concatenated RLP blocks (`geth export`) is executed with the fork rules of the genesis,
//! every header field a full node checks is checked, and each block is committed to the
//! store as the builder's blocks are. Seals (ethash nonce and mix hash) are not checked.
//!
//! - [`importer`]: the loop — header and body rules, execution, the header against the
//!   result, commit; resumable after the store's head; progress reports.
//! - [`execute`]: one block on its parent's state (system calls, transactions, requests,
//!   rewards or withdrawals) and the roots it comes to.
//! - [`deposits`]: EIP-6110 deposit requests from the deposit contract's logs.
//! - [`op`]: an OP chain's blocks (deposits, the L1 data fee, each OP fork's fields) on
//!   op-revm, chosen when the genesis is an OP chain's.
//!
//! Afterwards the store's fork choice names `safe` and `finalized` (the last block unless
//! told otherwise), which the node then serves.

pub mod deposits;
pub mod error;
pub mod execute;
pub mod importer;
pub mod op;

use std::path::PathBuf;
use std::time::Duration;

use alloy_primitives::B256;

pub use error::{BlockFault, ImportError, TxFault};
pub use importer::{ChainTx, ImportProgress, Importer};

use crate::consensus::BlockReader;
use crate::genesis::seed::{file_source, open_genesis, GenesisSource};
use crate::store::Store;
use preconf_op::OpTx;

/// What `preconf-node import` is asked to do.
#[derive(Clone, Debug)]
pub struct ImportConfig {
    pub datadir: PathBuf,
    /// The chain's genesis (seeds an empty datadir; must match a datadir's chain).
    pub genesis: ImportGenesis,
    /// Concatenated RLP blocks.
    pub blocks_file: PathBuf,
    /// `safe` after the import (default: the head).
    pub safe: Option<u64>,
    /// `finalized` after the import (default: the head).
    pub finalized: Option<u64>,
    pub db_cache_bytes: usize,
    /// How often progress is reported.
    pub progress_every: Duration,
}

/// Where the chain being imported starts.
#[derive(Clone, Debug)]
pub enum ImportGenesis {
    /// A genesis.json, and the chain config for one whose `config` is null (an OP chain
    /// from the superchain registry): op-node's rollup.json or the registry's chain TOML.
    File(PathBuf, Option<PathBuf>),
    /// The embedded OP dev chain (`--optimism`), as the node's flag makes it.
    OpDev,
}

/// The outcome of an import.
#[derive(Clone, Debug)]
pub struct ImportSummary {
    pub progress: ImportProgress,
    pub head_hash: B256,
    pub genesis_hash: B256,
    pub safe: u64,
    pub finalized: u64,
}

/// Opens (or seeds) the datadir, imports the blocks file after its head, and sets the fork
/// choice. Stops at the first block that fails, with everything before it committed.
pub fn import_chain(
    config: &ImportConfig,
    on_progress: &mut dyn FnMut(&ImportProgress),
) -> Result<ImportSummary, ImportError> {
    if let (Some(safe), Some(finalized)) = (config.safe, config.finalized) {
        if finalized > safe {
            return Err(ImportError::FinalizedAfterSafe { safe, finalized });
        }
    }
    let store = Store::open(&config.datadir, config.db_cache_bytes)?;
    let source = match &config.genesis {
        ImportGenesis::File(file, chain_config) => file_source(file.clone(), chain_config.as_deref())?,
        ImportGenesis::OpDev => GenesisSource::OpDev(Default::default()),
    };
    let genesis = open_genesis(&source, &store)?;
    let mut importer = Importer::new(&store, &genesis.spec);
    importer.progress_every = config.progress_every;
    // An OP chain's blocks hold deposits, which Ethereum's transaction type cannot.
    let progress = match genesis.spec.op() {
        None => importer.import(BlockReader::open(&config.blocks_file)?, on_progress)?,
        Some(_) => importer.import(BlockReader::<_, OpTx>::open_typed(&config.blocks_file)?, on_progress)?,
    };
    let head = progress.head;
    let safe = config.safe.unwrap_or(head);
    let finalized = config.finalized.unwrap_or(safe.min(head));
    if safe > head || finalized > safe {
        return Err(ImportError::ForkChoice { safe, finalized, head });
    }
    store.set_fork_choice(safe, finalized)?;
    let head_hash = store.snapshot()?.block_hash(head)?.unwrap_or_default();
    Ok(ImportSummary { progress, head_hash, genesis_hash: genesis.hash, safe, finalized })
}

//! A store seeded with the kit's genesis, in a directory removed afterwards.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use alloy_consensus::{Block, TxEnvelope};
use preconf_chain::consensus::{BlockFileError, BlockReader, FileBlock};
use preconf_chain::genesis::seed::{open_genesis, GenesisSource, OpenedGenesis};
use preconf_chain::import::{ImportError, ImportProgress, Importer};
use preconf_chain::store::Store;

use super::kit;

/// A directory under the system temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("preconf-import-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn genesis_file() -> PathBuf {
    kit::kit_dir().join("chain/genesis.json")
}

/// Opens (seeding on first use) the store in `dir` with the kit's genesis.
pub fn open(dir: &TempDir) -> (Store, OpenedGenesis) {
    let store = Store::open(&dir.0, 64 << 20).expect("store opens");
    let genesis = open_genesis(&GenesisSource::File(genesis_file()), &store).expect("genesis seeds");
    (store, genesis)
}

/// The file's blocks as the importer reads them.
pub fn file_blocks() -> Vec<Result<FileBlock, BlockFileError>> {
    BlockReader::open(&kit::chain_file()).unwrap().collect()
}

/// Wraps decoded blocks as if read from a file.
pub fn as_file(blocks: Vec<Block<TxEnvelope>>) -> Vec<Result<FileBlock, BlockFileError>> {
    blocks
        .into_iter()
        .enumerate()
        .map(|(i, block)| Ok(FileBlock { index: i as u64, offset: 0, len: 0, block }))
        .collect()
}

/// Imports `blocks` into `store`, collecting the progress reports.
pub fn import(
    store: &Store,
    genesis: &OpenedGenesis,
    blocks: Vec<Result<FileBlock, BlockFileError>>,
) -> (Result<ImportProgress, ImportError>, Vec<ImportProgress>) {
    let mut importer = Importer::new(store, &genesis.spec);
    importer.progress_every = std::time::Duration::ZERO;
    let mut reports = Vec::new();
    let result = importer.import(blocks, &mut |p| reports.push(p.clone()));
    (result, reports)
}

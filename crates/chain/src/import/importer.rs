//! The import loop: each block of the file is checked against its parent (header and
//! body rules), executed, checked against what execution produced, and committed in one
//! durable store transaction. Blocks the store already holds are skipped (after checking
//! they are the same blocks), so an interrupted import resumes where it stopped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use alloy_consensus::{transaction::SignerRecoverable, Block, Header, TxEnvelope};
use alloy_primitives::{Address, Bytes, B256, U256};
use preconf_op::OpTx;
use revm::primitives::hardfork::SpecId;

use super::error::ImportError;
use super::execute::{execute_block, ExecutedBlock};
use crate::consensus::uncles::UNCLE_GENERATIONS;
use crate::consensus::{
    check_body, check_executed, check_header, check_uncles, expects_proof_of_stake, total_difficulty, Ancestor,
    BlockFileError, FileBlock, Parent,
};
use crate::error::Cause;
use crate::error::{ChainError, ConfigError, InternalError};
use crate::spec::ChainSpec;
use crate::state::CodeCache;
use crate::store::{BlockWrite, Store, StoredBody, StoredReceipts};

/// Where an import stands; handed to the progress callback.
#[derive(Clone, Debug, Default)]
pub struct ImportProgress {
    /// The newest block in the store.
    pub head: u64,
    /// Blocks executed and committed by this import.
    pub imported: u64,
    /// Blocks of the file the store already held.
    pub skipped: u64,
    /// Transactions executed by this import.
    pub transactions: u64,
    /// Gas used by the imported blocks.
    pub gas: u64,
    pub elapsed: Duration,
}

impl ImportProgress {
    /// Imported blocks per second so far.
    pub fn blocks_per_second(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.imported as f64 / secs
        } else {
            0.0
        }
    }
}

/// The parent of the next block, as the checks need it.
struct Tip {
    header: Header,
    hash: B256,
    total_difficulty: U256,
}

/// The transaction type of a blocks file, and what differs per chain kind: Ethereum's
/// blocks (`TxEnvelope`) or an OP chain's (`OpTx`, deposits included). The import loop,
/// the header rules, the checks against execution and the store's commit are the same.
pub trait ChainTx: Sized {
    /// The rules between the header and the body (and the uncles, on Ethereum).
    fn check_body(importer: &Importer<'_>, block: &Block<Self>, hash: B256) -> Result<(), ImportError>;
    fn senders(importer: &Importer<'_>, block: &Block<Self>) -> Result<Vec<Address>, ImportError>;
    /// Executes the block on the store's head, `parent`.
    fn execute(
        importer: &Importer<'_>,
        parent: &Header,
        block: &Block<Self>,
        senders: &[Address],
    ) -> Result<ExecutedBlock, ImportError>;
}

impl ChainTx for TxEnvelope {
    fn check_body(importer: &Importer<'_>, block: &Block<Self>, hash: B256) -> Result<(), ImportError> {
        check_body(importer.spec, block)?;
        if !block.body.ommers.is_empty() {
            check_uncles(importer.spec, block, hash, &importer.ancestors(block.header.number)?)?;
        }
        Ok(())
    }

    fn senders(importer: &Importer<'_>, block: &Block<Self>) -> Result<Vec<Address>, ImportError> {
        importer.senders(block)
    }

    fn execute(
        importer: &Importer<'_>,
        _: &Header,
        block: &Block<Self>,
        senders: &[Address],
    ) -> Result<ExecutedBlock, ImportError> {
        let snapshot = importer.store.snapshot()?;
        execute_block(importer.spec, &snapshot, &importer.codes, block, senders)
    }
}

impl ChainTx for OpTx {
    fn check_body(importer: &Importer<'_>, block: &Block<Self>, _: B256) -> Result<(), ImportError> {
        super::op::check_body(importer.spec, block)
    }

    fn senders(_: &Importer<'_>, block: &Block<Self>) -> Result<Vec<Address>, ImportError> {
        super::op::senders(block)
    }

    fn execute(
        importer: &Importer<'_>,
        parent: &Header,
        block: &Block<Self>,
        senders: &[Address],
    ) -> Result<ExecutedBlock, ImportError> {
        // `import_chain` reads OP blocks only for an OP genesis.
        let not_op = || std::io::Error::other("OP blocks need an OP chain's genesis");
        let op =
            importer.spec.op().ok_or_else(|| ChainError::from(ConfigError::InvalidGenesis(Cause::new(not_op()))))?;
        let snapshot = importer.store.snapshot()?;
        super::op::execute_block(importer.spec, op, &snapshot, &importer.codes, parent, block, senders)
    }
}

pub struct Importer<'a> {
    store: &'a Store,
    spec: &'a ChainSpec,
    codes: Arc<CodeCache>,
    /// How often the progress callback runs (zero: after every block).
    pub progress_every: Duration,
}

impl<'a> Importer<'a> {
    pub fn new(store: &'a Store, spec: &'a ChainSpec) -> Self {
        Self { store, spec, codes: Arc::new(CodeCache::default()), progress_every: Duration::from_secs(1) }
    }

    /// Imports the blocks `blocks` yields, in order, after the store's head. Returns the
    /// final progress (also reported last to `on_progress`).
    pub fn import<T: ChainTx>(
        &self,
        blocks: impl IntoIterator<Item = Result<FileBlock<T>, BlockFileError>>,
        on_progress: &mut dyn FnMut(&ImportProgress),
    ) -> Result<ImportProgress, ImportError> {
        let started = Instant::now();
        let mut tip = self.tip()?;
        let mut progress = ImportProgress { head: tip.header.number, ..Default::default() };
        let mut reported = Instant::now();
        for item in blocks {
            let block = item?.block;
            let number = block.header.number;
            if number <= tip.header.number {
                self.check_stored(&block)?;
                progress.skipped += 1;
                continue;
            }
            if number != tip.header.number + 1 {
                return Err(ImportError::Gap { number, head: tip.header.number });
            }
            let hash = self.import_block(&tip, &block)?;
            progress.imported += 1;
            progress.transactions += block.body.transactions.len() as u64;
            progress.gas += block.header.gas_used;
            progress.head = number;
            let total_difficulty = total_difficulty(tip.total_difficulty, &block.header);
            tip = Tip { header: block.header, hash, total_difficulty };
            if reported.elapsed() >= self.progress_every {
                progress.elapsed = started.elapsed();
                on_progress(&progress);
                reported = Instant::now();
            }
        }
        progress.elapsed = started.elapsed();
        on_progress(&progress);
        Ok(progress)
    }

    /// Checks, executes and commits one block on top of `tip`; returns its hash.
    fn import_block<T: ChainTx>(&self, tip: &Tip, block: &Block<T>) -> Result<B256, ImportError> {
        let header = &block.header;
        let parent = Parent { header: &tip.header, hash: tip.hash, total_difficulty: tip.total_difficulty };
        check_header(self.spec, &parent, header)?;
        let hash = header.hash_slow();
        T::check_body(self, block, hash)?;
        let senders = T::senders(self, block)?;
        let executed = T::execute(self, &tip.header, block, &senders)?;
        check_executed(header, &executed.executed)?;

        let body = StoredBody {
            txs: executed.txs.iter().map(|t| t.stored_tx()).collect(),
            ommers: block.body.ommers.clone(),
            withdrawals: block.body.withdrawals.clone().map(|w| w.into_inner()).unwrap_or_default(),
        };
        let receipts =
            StoredReceipts { receipts: executed.txs.iter().map(|t| Bytes::from(t.receipt_2718())).collect() };
        let tx_hashes: Vec<B256> = executed.txs.iter().map(|t| t.hash()).collect();
        self.store.commit_block(BlockWrite {
            header,
            hash,
            body: &body,
            receipts: &receipts,
            tx_hashes: &tx_hashes,
            changes: &executed.changes,
            trie: &executed.trie,
        })?;
        Ok(hash)
    }

    /// The stored ancestors of block `number`, parent first, as many as the uncle rules
    /// look at. Import is linear, so they are the store's canonical blocks.
    fn ancestors(&self, number: u64) -> Result<Vec<Ancestor>, ImportError> {
        let snapshot = self.store.snapshot()?;
        let missing = |n: u64| ChainError::from(InternalError::MissingBlock(n));
        let mut out = Vec::with_capacity(UNCLE_GENERATIONS);
        for n in (number.saturating_sub(UNCLE_GENERATIONS as u64)..number).rev() {
            let header = snapshot.header(n)?.ok_or_else(|| missing(n))?;
            let hash = snapshot.block_hash(n)?.ok_or_else(|| missing(n))?;
            let uncles =
                snapshot.body(n)?.map(|b| b.ommers.iter().map(Header::hash_slow).collect()).unwrap_or_default();
            out.push(Ancestor { hash, header, uncles });
        }
        Ok(out)
    }

    /// Recovers every sender; before Homestead high-s signatures were valid (EIP-2).
    fn senders(&self, block: &Block<TxEnvelope>) -> Result<Vec<Address>, ImportError> {
        let number = block.header.number;
        let frontier = !self.spec.spec_for_header(&block.header).is_enabled_in(SpecId::HOMESTEAD);
        super::error::recover_senders(number, &block.body.transactions, |tx| {
            let sender = if frontier { tx.recover_signer_unchecked() } else { tx.recover_signer() };
            (*tx.tx_hash(), sender)
        })
    }

    /// A block of the file the store already holds must be the same block.
    fn check_stored<T>(&self, block: &Block<T>) -> Result<(), ImportError> {
        let number = block.header.number;
        let stored = self.store.snapshot()?.block_hash(number)?.unwrap_or_default();
        let file = block.header.hash_slow();
        if stored != file {
            return Err(ImportError::Conflict { number, stored, file });
        }
        Ok(())
    }

    /// The store's head, with its total difficulty: after the Merge any value at or past the
    /// terminal total difficulty decides the same, so only a proof-of-work head needs the
    /// sum over its ancestors.
    fn tip(&self) -> Result<Tip, ImportError> {
        let snapshot = self.store.snapshot()?;
        let number = snapshot.head().ok_or_else(|| ChainError::from(InternalError::NoHead))?;
        let missing = |n: u64| ChainError::from(InternalError::MissingBlock(n));
        let header = snapshot.header(number)?.ok_or_else(|| missing(number))?;
        let hash = snapshot.block_hash(number)?.ok_or_else(|| missing(number))?;
        let config = &self.spec.genesis.config;
        let merged = number > 0 && header.difficulty.is_zero();
        let total_difficulty = match config.terminal_total_difficulty {
            Some(ttd) if merged => ttd,
            _ => {
                let mut td = U256::ZERO;
                for n in 0..=number {
                    td += snapshot.header(n)?.ok_or_else(|| missing(n))?.difficulty;
                }
                td
            }
        };
        debug_assert!(!merged || expects_proof_of_stake(self.spec, total_difficulty));
        Ok(Tip { header, hash, total_difficulty })
    }
}

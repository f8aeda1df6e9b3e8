//! Failures for the operator rather than a client: a configuration or datadir the node
//! cannot start with, and failures of the node itself. No client matches on these words,
//! but they are still written once, here, with the error underneath kept as data.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use alloy_consensus::Eip658Value;
use alloy_primitives::{Address, B256};
use revm::context_interface::result::ExecutionResult;

use super::DropReason;

/// The error underneath a failure (I/O, storage, a decoder), kept whole and shared, so the
/// failure stays `Clone`: one reply can go to several waiters.
#[derive(Clone)]
pub struct Cause(Arc<dyn std::error::Error + Send + Sync>);

impl Cause {
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Cause(Arc::new(e))
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// The node cannot start, or a command (export, fork choice) cannot run, with this
/// configuration or datadir: one line that says what to change.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot create datadir {}: {source}", dir.display())]
    CreateDatadir { dir: PathBuf, source: Cause },
    #[error("cannot open store {}: {source}", path.display())]
    OpenStore { path: PathBuf, source: Cause },
    #[error(
        "store schema {found} is not supported by this version of preconf-node (schema {supported}; it migrates \
         schema {migrates} stores): the datadir was written by another version; run that version, or sync into \
         a new --datadir"
    )]
    Schema { found: String, supported: String, migrates: String },
    /// The datadir's store is empty where a chain is needed (export, fork choice, verify).
    #[error("the datadir holds no chain")]
    NoChain,
    #[error("cannot open the pool journal in {}: {source}", dir.display())]
    Journal { dir: PathBuf, source: Cause },
    #[error("--dev needs a node that builds its own blocks: not with --no-build, --follow or --cluster")]
    DevWithoutBuilder,
    #[error("cannot read genesis file {}: {source}", path.display())]
    ReadGenesis { path: PathBuf, source: Cause },
    #[error("invalid genesis file: {0}")]
    InvalidGenesis(#[source] Cause),
    #[error("genesis config has no chainId")]
    NoChainId,
    #[error(
        "the genesis file carries its own chain config: --rollup-config is for genesis files whose config is null"
    )]
    TwoChainConfigs,
    #[error("cannot read the chain config {}: {source}", path.display())]
    ReadChainConfig { path: PathBuf, source: Cause },
    #[error(
        "OP Stack chain: {fork} is still to come and its upgrade transactions give the predeploy {predeploy} a \
         new implementation behind its proxy, but the chain has no proxy there (no ERC-1967 admin); \
         drive it from op-node through the Engine API (--authrpc.port, sequencer mode), or start with --no-build \
         to serve it"
    )]
    OpUpgradeWithoutProxy { fork: &'static str, predeploy: Address },
    #[error(
        "the datadir holds a different chain (genesis {0}) than the genesis configured; use another --datadir or \
         the same genesis"
    )]
    OtherChain(B256),
    #[error("the datadir holds a chain that is not a fork: start it without --fork-url, or use another datadir")]
    NotAFork,
    #[error("the fork choice needs finalized <= safe <= head, got finalized {finalized}, safe {safe}, head {head}")]
    ForkChoice { safe: u64, finalized: u64, head: u64 },
    #[error("nothing to export from {from} to {to}: the store holds blocks 0 to {head}")]
    ExportRange { from: u64, to: u64, head: u64 },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: Cause },
}

/// A failure of the node itself: the store does not read back what it wrote, a thread is
/// gone, a system contract fails. Logged, and answered as an internal error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum InternalError {
    /// redb failed (I/O underneath, or a transaction it refused).
    #[error("storage: {0}")]
    Storage(#[source] Cause),
    #[error("{0}")]
    Trie(#[source] Cause),
    #[error("store has no head")]
    NoHead,
    #[error("block {0} is missing from the store")]
    MissingBlock(u64),
    #[error("missing code {0}")]
    MissingCode(B256),
    #[error("corrupt header {number}: {source}")]
    CorruptHeader { number: u64, source: Cause },
    #[error("corrupt body {0}")]
    CorruptBody(u64),
    #[error("corrupt receipts {0}")]
    CorruptReceipts(u64),
    #[error("stored change set of block {number}: {source}")]
    CorruptChangeSet { number: u64, source: Cause },
    /// `number`: the block, where the reader knows it.
    #[error("corrupt stored tx{}: {source}", in_block(number))]
    CorruptTx { number: Option<u64>, source: Cause },
    #[error("corrupt stored receipt: {0}")]
    CorruptReceipt(#[source] Cause),
    /// A stored receipt of a type that carries no receipt body.
    #[error("bad receipt")]
    BadReceipt,
    #[error("block {0}: a receipt does not decode")]
    ReceiptToStore(u64),
    #[error("block {number}: {txs} transactions but {receipts} receipts")]
    ReceiptCount { number: u64, txs: usize, receipts: usize },
    #[error("corrupt history key list")]
    CorruptHistoryKeys,
    #[error("stored genesis spec: {0}")]
    CorruptGenesisSpec(#[source] Cause),
    #[error("the store has a genesis hash or spec but not both")]
    HalfGenesis,
    #[error("genesis spec: {0}")]
    GenesisSpec(#[source] Cause),
    #[error("genesis alloc received after its state root")]
    AllocAfterRoot,
    #[error("genesis import: a sorted record is malformed")]
    SortedRecord,
    #[error("genesis import: {}: {source}", path.display())]
    SortSpill { path: PathBuf, source: Cause },
    #[error("system call to {address} failed: {source}")]
    SystemCall { address: Address, source: Cause },
    /// A system call the block needs ran and did not succeed (revm's result, as it says it).
    #[error("system call to {address} failed: {result:?}")]
    SystemCallUnsuccessful { address: Address, result: Box<ExecutionResult> },
    #[error("system contract {0} has no code")]
    NoSystemContract(Address),
    #[error("invalid block header: {0}")]
    BlockHeader(#[source] Cause),
    /// What revm reports beyond a transaction's fault or the database's.
    #[error("{0}")]
    Evm(#[source] Cause),
    #[error("tracer: {0}")]
    Tracer(#[source] Cause),
    #[error("replaying transaction {hash} failed: {source}")]
    Replay { hash: B256, source: Cause },
    #[error("replaying transaction {hash} used {gas_used} gas where its block recorded {recorded}")]
    ReplayGas { hash: B256, gas_used: u64, recorded: u64 },
    #[error("no trace for the transaction")]
    NoTrace,
    #[error("simulation state lost")]
    SimulationStateLost,
    #[error("state dump: {0}")]
    StateDump(#[source] Cause),
    /// A dev account's key cannot sign.
    #[error("signing with a dev account's key: {0}")]
    Signing(#[source] Cause),
    /// `0`: the builder's reply, as Debug prints it (its type is the dev module's).
    #[error("the builder answered a test method with {0}")]
    UnexpectedDevReply(String),
    #[error("the builder already runs")]
    BuilderRunning,
    #[error("cannot start a thread: {0}")]
    Spawn(#[source] Cause),
    /// `0`: which thread ("committer", "builder").
    #[error("the {0} thread is gone")]
    ThreadGone(&'static str),
    #[error("cannot open block {number}: {source}")]
    OpenBlock { number: u64, source: Cause },
    /// Taking over a block another leader had shown: one of its transactions does not
    /// execute here as it did there.
    #[error("cannot continue block {number}: transaction {index} ({hash:#x}) {why}")]
    CannotContinue { number: u64, index: usize, hash: B256, why: Box<Divergence> },
    /// `what`: the work that panicked; `message`: the panic's payload.
    #[error("{what} panicked: {message}")]
    Panicked { what: &'static str, message: String },
}

/// How a shown transaction behaves differently when its block is continued.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Divergence {
    #[error("no longer fits")]
    NoRoom,
    #[error("no longer executes: {0}")]
    Invalid(DropReason),
    #[error(
        "executes differently: gas {gas} (shown {shown_gas}), status {status:?} (shown {shown_status:?}), {logs} logs \
         (shown {shown_logs})"
    )]
    Differs { gas: u64, shown_gas: u64, status: Eip658Value, shown_status: Eip658Value, logs: usize, shown_logs: usize },
}

fn in_block(number: &Option<u64>) -> String {
    number.map(|n| format!(" in block {n}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_line_is_the_one_the_docs_quote() {
        let e = ConfigError::Schema { found: "9".into(), supported: "3".into(), migrates: "2".into() };
        assert_eq!(
            e.to_string(),
            "store schema 9 is not supported by this version of preconf-node (schema 3; it migrates schema 2 stores): \
             the datadir was written by another version; run that version, or sync into a new --datadir"
        );
    }

    #[test]
    fn the_cause_is_kept_and_worded_after_the_failure() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = ConfigError::ReadGenesis { path: "g.json".into(), source: Cause::new(io) };
        assert_eq!(e.to_string(), "cannot read genesis file g.json: gone");
        assert_eq!(std::error::Error::source(&e).map(|s| s.to_string()).as_deref(), Some("gone"));
        let e = InternalError::CorruptTx { number: Some(7), source: Cause::new(std::fmt::Error) };
        assert_eq!(e.to_string(), "corrupt stored tx in block 7: an error occurred when formatting an argument");
    }
}

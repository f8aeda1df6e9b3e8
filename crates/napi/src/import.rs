//! `preconf-node import`: imports a blocks file into a datadir on a thread of its own and
//! reports progress to JavaScript while it runs. The result is a summary, or a failure
//! naming the block (and header field) the import stopped at.

use std::path::PathBuf;
use std::time::Duration;

use napi::bindgen_prelude::{Either, PromiseRaw};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status};
use napi_derive::napi;
use preconf_chain::import::{import_chain as run_import, ImportConfig, ImportError, ImportGenesis, ImportProgress};
use preconf_chain::ChainConfig;

#[napi(object)]
pub struct ImportOptions {
    pub datadir: String,
    /// The chain's geth-style genesis.json (none with `optimism`).
    pub genesis_file: Option<String>,
    /// Concatenated RLP blocks (`geth export`).
    pub blocks_file: String,
    /// The chain config for a genesis whose `config` is null (an OP chain from the
    /// superchain registry): op-node's rollup.json or the registry's chain TOML.
    pub rollup_config: Option<String>,
    /// The embedded OP dev chain (`--optimism`) instead of a genesis file.
    pub optimism: Option<bool>,
    /// `safe` after the import (default: the last block).
    pub safe: Option<i64>,
    /// `finalized` after the import (default: the last block, or `safe` when given).
    pub finalized: Option<i64>,
    pub db_cache_mb: Option<u32>,
    /// How often progress is reported (default 1000 ms).
    pub progress_interval_ms: Option<u32>,
}

/// Where an import stands.
#[napi(object)]
pub struct ImportProgressInfo {
    /// The newest block in the store.
    pub head: i64,
    /// Blocks executed and committed by this import.
    pub imported: i64,
    /// Blocks of the file the store already held.
    pub skipped: i64,
    pub transactions: i64,
    /// Gas of the imported blocks (a double: it can pass 2^53 only on very long chains).
    pub gas: f64,
    pub elapsed_ms: f64,
    pub blocks_per_second: f64,
}

#[napi(object)]
pub struct ImportResult {
    pub progress: ImportProgressInfo,
    pub head_hash: String,
    pub genesis_hash: String,
    pub safe: i64,
    pub finalized: i64,
}

/// Why the import stopped. `block` and `field` are set when a block broke a rule.
#[napi(object)]
pub struct ImportFailure {
    pub message: String,
    pub block: Option<i64>,
    /// The header field (JSON-RPC name, e.g. `stateRoot`) that disagreed.
    pub field: Option<String>,
}

/// Called with the import's progress; weak, so it never keeps the process alive.
#[napi]
pub type ProgressCallback = ThreadsafeFunction<ImportProgressInfo, (), ImportProgressInfo, Status, false, true>;

fn info(p: &ImportProgress) -> ImportProgressInfo {
    ImportProgressInfo {
        head: p.head as i64,
        imported: p.imported as i64,
        skipped: p.skipped as i64,
        transactions: p.transactions as i64,
        gas: p.gas as f64,
        elapsed_ms: p.elapsed.as_secs_f64() * 1000.0,
        blocks_per_second: p.blocks_per_second(),
    }
}

fn block_number(v: Option<i64>, flag: &str) -> napi::Result<Option<u64>> {
    v.map(|n| u64::try_from(n).map_err(|_| napi::Error::from_reason(format!("{flag} must not be negative, got {n}"))))
        .transpose()
}

fn failure(e: ImportError) -> ImportFailure {
    ImportFailure {
        block: e.block_number().map(|n| n as i64),
        field: e.field().map(|f| f.name().to_string()),
        message: e.to_string(),
    }
}

/// Imports `blocksFile` into `datadir` (seeding it from `genesisFile` when empty), after
/// the store's head; `onProgress` is called about every `progressIntervalMs` and once at
/// the end. Resolves with the summary or the failure; never runs on the event loop.
#[napi]
pub fn import_chain<'env>(
    env: &'env Env,
    options: ImportOptions,
    on_progress: Option<ProgressCallback>,
) -> napi::Result<PromiseRaw<'env, Either<ImportResult, ImportFailure>>> {
    let config = ImportConfig {
        datadir: PathBuf::from(options.datadir),
        genesis: match (options.optimism.unwrap_or(false), options.genesis_file) {
            (true, _) => ImportGenesis::OpDev,
            (false, Some(file)) => ImportGenesis::File(file.into(), options.rollup_config.map(PathBuf::from)),
            (false, None) => return Err(napi::Error::from_reason("a genesis file or optimism is required")),
        },
        blocks_file: PathBuf::from(options.blocks_file),
        safe: block_number(options.safe, "safe")?,
        finalized: block_number(options.finalized, "finalized")?,
        db_cache_bytes: options.db_cache_mb.map_or(ChainConfig::default().db_cache_bytes, |mb| (mb as usize) << 20),
        progress_every: Duration::from_millis(options.progress_interval_ms.unwrap_or(1000) as u64),
    };
    let (deferred, promise) = env.create_deferred::<Either<ImportResult, ImportFailure>, _>()?;
    std::thread::Builder::new()
        .name("preconf-import".into())
        .spawn(move || {
            let mut report = |p: &ImportProgress| {
                if let Some(cb) = &on_progress {
                    cb.call(info(p), ThreadsafeFunctionCallMode::NonBlocking);
                }
            };
            let run = std::panic::AssertUnwindSafe(|| run_import(&config, &mut report));
            let outcome = match std::panic::catch_unwind(run) {
                Ok(Ok(s)) => Either::A(ImportResult {
                    progress: info(&s.progress),
                    head_hash: s.head_hash.to_string(),
                    genesis_hash: s.genesis_hash.to_string(),
                    safe: s.safe as i64,
                    finalized: s.finalized as i64,
                }),
                Ok(Err(e)) => Either::B(failure(e)),
                Err(_) => Either::B(ImportFailure { message: "the import panicked".into(), block: None, field: None }),
            };
            deferred.resolve(move |_| Ok(outcome));
        })
        .map_err(|e| napi::Error::from_reason(e.to_string()))?;
    Ok(crate::work::typed(env, promise))
}

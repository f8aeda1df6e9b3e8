//! Operator tools that work on a datadir without running a node.

use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use napi_derive::napi;
use preconf_chain::store::Store;

/// What `preconf-node verify` found.
#[napi(object)]
pub struct VerifyReport {
    pub head: i64,
    pub header_root: String,
    pub recomputed_root: String,
    pub trie_root: String,
    pub accounts: i64,
    pub slots: i64,
    /// All three roots agree.
    pub ok: bool,
}

pub struct Verify {
    datadir: String,
}

#[napi]
impl Task for Verify {
    type Output = VerifyReport;
    type JsValue = VerifyReport;

    fn compute(&mut self) -> napi::Result<VerifyReport> {
        let fail = |e: preconf_chain::ChainError| napi::Error::from_reason(e.to_string());
        let store = Store::open(std::path::Path::new(&self.datadir), 64 << 20).map_err(fail)?;
        let r = store.verify().map_err(fail)?;
        Ok(VerifyReport {
            head: r.head as i64,
            header_root: r.header_root.to_string(),
            recomputed_root: r.recomputed_root.to_string(),
            trie_root: r.trie_root.to_string(),
            accounts: r.accounts as i64,
            slots: r.slots as i64,
            ok: r.ok(),
        })
    }

    fn resolve(&mut self, _env: Env, output: VerifyReport) -> napi::Result<VerifyReport> {
        Ok(output)
    }
}

/// Recomputes the head's state root from the stored values and compares it with the head
/// header and the persisted trie (the store must not be open in another process).
#[napi]
pub fn verify_store(datadir: String) -> AsyncTask<Verify> {
    AsyncTask::new(Verify { datadir })
}

/// What `preconf-node export` is asked to do.
#[napi(object)]
pub struct ExportOptions {
    pub datadir: String,
    /// The blocks file to write (RLP blocks back to back, as `geth export` writes them).
    pub file: String,
    /// First block (default 1: block 0 comes from the genesis file).
    pub from: Option<i64>,
    /// Last block (default: the head).
    pub to: Option<i64>,
}

/// What `preconf-node export` wrote.
#[napi(object)]
pub struct ExportResult {
    pub from: i64,
    pub to: i64,
    pub bytes: f64,
    /// Hash of the last block written.
    pub last_hash: String,
}

pub struct Export {
    options: ExportOptions,
}

#[napi]
impl Task for Export {
    type Output = ExportResult;
    type JsValue = ExportResult;

    fn compute(&mut self) -> napi::Result<ExportResult> {
        let fail = |e: preconf_chain::ChainError| napi::Error::from_reason(e.to_string());
        let o = &self.options;
        let number = |v: Option<i64>, what: &str| {
            v.map(|n| u64::try_from(n).map_err(|_| napi::Error::from_reason(format!("--{what} must not be negative"))))
                .transpose()
        };
        let (from, to) = (number(o.from, "from")?, number(o.to, "to")?);
        let store = Store::open(std::path::Path::new(&o.datadir), 64 << 20).map_err(fail)?;
        let s = preconf_chain::export::export_blocks(&store, from, to, std::path::Path::new(&o.file), |_| {})
            .map_err(fail)?;
        Ok(ExportResult {
            from: s.from as i64,
            to: s.to as i64,
            bytes: s.bytes as f64,
            last_hash: s.last_hash.to_string(),
        })
    }

    fn resolve(&mut self, _env: Env, output: ExportResult) -> napi::Result<ExportResult> {
        Ok(output)
    }
}

/// Writes the stored blocks `from..=to` of a stopped node's datadir as a blocks file that
/// `preconf-node import` (and geth's import) reads.
#[napi]
pub fn export_chain(options: ExportOptions) -> AsyncTask<Export> {
    AsyncTask::new(Export { options })
}

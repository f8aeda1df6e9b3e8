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
#[napi(ts_return_type = "Promise<VerifyReport>")]
pub fn verify_store(datadir: String) -> AsyncTask<Verify> {
    AsyncTask::new(Verify { datadir })
}

//! Work that runs on libuv's thread pool and resolves a Promise<string>.

use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use preconf_chain::ChainResult;
use serde_json::Value;

type Work = Box<dyn FnOnce() -> ChainResult<Value> + Send>;

pub struct Job(Option<Work>);

impl Job {
    pub fn spawn(work: impl FnOnce() -> ChainResult<Value> + Send + 'static) -> AsyncTask<Job> {
        AsyncTask::new(Job(Some(Box::new(work))))
    }
}

impl Task for Job {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        let work = self.0.take().ok_or_else(|| napi::Error::from_reason("job ran twice"))?;
        // A panic in the chain must not take the process down: report it as internal.
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(preconf_chain::ChainError::Internal(format!("panic: {msg}")))
        });
        Ok(super::encode(out))
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

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

/// A few dedicated threads for transaction submission. Submitting mostly waits for the
/// journal's fdatasync; on libuv's small pool that wait would queue behind slow eth_calls,
/// and a large libuv pool oversubscribes the cores for CPU-bound calls (measured).
pub struct SubmitPool {
    jobs: std::sync::Mutex<std::sync::mpsc::Sender<Box<dyn FnOnce() + Send>>>,
}

const SUBMIT_THREADS: usize = 8;

impl SubmitPool {
    pub fn global() -> &'static SubmitPool {
        static POOL: std::sync::OnceLock<SubmitPool> = std::sync::OnceLock::new();
        POOL.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Box<dyn FnOnce() + Send>>();
            let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
            for i in 0..SUBMIT_THREADS {
                let rx = rx.clone();
                std::thread::Builder::new()
                    .name(format!("preconf-submit-{i}"))
                    .spawn(move || loop {
                        let job = match rx.lock() {
                            Ok(guard) => guard.recv(),
                            Err(_) => return,
                        };
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
                        }
                    })
                    .expect("spawn a submission thread");
            }
            SubmitPool { jobs: std::sync::Mutex::new(tx) }
        })
    }

    /// Runs `work` on a submission thread; the promise resolves with its encoded result.
    pub fn run<'env>(
        env: &'env Env,
        work: impl FnOnce() -> ChainResult<Value> + Send + 'static,
    ) -> napi::Result<napi::bindgen_prelude::Object<'env>> {
        let (deferred, promise) = env.create_deferred::<String, _>()?;
        let job: Box<dyn FnOnce() + Send> = Box::new(move || {
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| Err(preconf_chain::ChainError::Internal("panic while submitting".into())));
            let text = super::encode(out);
            deferred.resolve(move |_| Ok(text));
        });
        Self::global()
            .jobs
            .lock()
            .map_err(|_| napi::Error::from_reason("submission pool poisoned"))?
            .send(job)
            .map_err(|_| napi::Error::from_reason("submission pool stopped"))?;
        Ok(promise)
    }
}

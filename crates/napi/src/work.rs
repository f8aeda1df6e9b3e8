//! Work that must not run on a JavaScript event loop, by cost class. Each class has its
//! own threads and a bounded queue: a flood of one kind (simulations, log scans) cannot
//! hold up another (calls, submissions), and a full queue answers at once with a clear
//! `Overloaded` failure instead of growing without bound.
//!
//! Within a class, jobs are served per client (the key the transport passes: the client's
//! address), taking turns: one client's flood queues behind its own jobs, not in front of
//! everyone else's. A client may hold at most a share of a class's queue, and in a class
//! of three threads or more it may run on all but one of them, so a newcomer finds a
//! thread free (docs/hostile-clients.md).
//!
//! Here: running work and answering its promise (`run`, `run_or_defer` for work that may
//! meet a fork's upstream); the classes and their counters in `class`, the queues and
//! their threads in `queue`.

mod class;
mod queue;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use napi::bindgen_prelude::{Either, JsValue, Object, PromiseRaw};
use napi::Env;
use parking_lot::Mutex;
use preconf_chain::error::{UpstreamError, UpstreamFailure};
use preconf_chain::{ChainError, ChainResult, InternalError};

use crate::failure::{outcome, ErrorKind, NativeFailure, Outcome};
pub use class::{snapshot, Class};
use queue::{Deliver, Job, Refusal};

/// Whose job it is: a hash of the client's address, from the transport. `None` (work the
/// node does for itself, or a caller that does not say) takes turns as one client and is
/// not held to a client's share.
pub type ClientKey = Option<u32>;

/// Runs `work`, turning a panic in the chain into an internal error: it must not take the
/// process down, on a worker thread or on an event loop.
pub fn guarded(work: impl FnOnce() -> ChainResult<String>) -> ChainResult<String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|p| {
        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
        Err(InternalError::Panicked { what: "the request", message: msg.unwrap_or_else(|| "unknown".into()) }.into())
    })
}

/// A promise of a method's answer: typed, so the generated TypeScript says what it
/// resolves to (`Promise<string | NativeFailure>`).
pub type Answer<'env> = PromiseRaw<'env, Either<String, NativeFailure>>;

/// `promise` with the type it resolves to, for the generated TypeScript.
pub(crate) fn typed<'env, T>(env: &'env Env, promise: Object<'env>) -> PromiseRaw<'env, T> {
    PromiseRaw::new(env.raw(), promise.raw())
}

/// Runs `work` on a thread of `class` in `client`'s turn; the promise resolves with its
/// result or failure.
pub fn run<'env>(
    env: &'env Env,
    class: Class,
    client: ClientKey,
    work: impl FnOnce() -> ChainResult<String> + Send + 'static,
) -> napi::Result<Answer<'env>> {
    let (reply, promise) = reply(env)?;
    let job = counted(class, move || {
        let out = outcome(guarded(work));
        Box::new(move || reply(out))
    });
    answered(env, promise, push(class, client, job))
}

/// As `run`, for work that may meet a forked chain's upstream (a call, an estimate): it runs
/// first without waiting for it (memory and the fork's cache only); when it would have to
/// wait, it runs again from the start on a thread of `then` (`Class::Upstream`), so that a
/// slow upstream holds those threads and never `class`'s, where the warm work of every
/// other client runs.
pub fn run_or_defer<'env>(
    env: &'env Env,
    class: Class,
    then: Class,
    client: ClientKey,
    work: impl Fn() -> ChainResult<String> + Send + Sync + 'static,
) -> napi::Result<Answer<'env>> {
    let (reply, promise) = reply(env)?;
    let job = counted(class, move || {
        let first = guarded(|| preconf_chain::fork::without_waiting(&work));
        if !matches!(&first, Err(ChainError::Upstream(UpstreamError { failure: UpstreamFailure::WouldWait, .. }))) {
            let out = outcome(first);
            return Box::new(move || reply(out));
        }
        // The reply goes with the job; taken back if the upstream class refuses it.
        let reply = Arc::new(Mutex::new(Some(reply)));
        let taken = reply.clone();
        let again = counted(then, move || {
            let out = outcome(guarded(work));
            Box::new(move || {
                if let Some(r) = taken.lock().take() {
                    r(out)
                }
            })
        });
        match push(then, client, again) {
            Ok(()) => Box::new(|| {}),
            Err(message) => Box::new(move || {
                if let Some(r) = reply.lock().take() {
                    r(busy(message))
                }
            }),
        }
    });
    answered(env, promise, push(class, client, job))
}

/// Resolves a promise with an outcome, from any thread.
type Reply = Box<dyn FnOnce(Outcome) + Send>;

fn reply(env: &Env) -> napi::Result<(Reply, Object<'_>)> {
    let (deferred, promise) = env.create_deferred::<Outcome, _>()?;
    Ok((Box::new(move |out| deferred.resolve(move |_| Ok(out))), promise))
}

/// `work` as a job of `class`, counted in its metrics.
fn counted(class: Class, work: impl FnOnce() -> Deliver + Send + 'static) -> Job {
    let stats = class.stats();
    Box::new(move || {
        stats.queued.fetch_sub(1, Relaxed);
        stats.running.fetch_add(1, Relaxed);
        let deliver = work();
        stats.running.fetch_sub(1, Relaxed);
        stats.completed.fetch_add(1, Relaxed);
        deliver
    })
}

/// Queues `job` on `class`; when its queue (or the client's share of it) is full, the job is
/// dropped and the refusal's message returned.
fn push(class: Class, client: ClientKey, job: Job) -> Result<(), String> {
    let (pool, stats) = (class.pool(), class.stats());
    // Counted before sending: a thread may start the job before try_send returns.
    stats.queued.fetch_add(1, Relaxed);
    let Err((job, why)) = pool.queue.push(client, job, pool.capacity) else { return Ok(()) };
    stats.queued.fetch_sub(1, Relaxed);
    stats.rejected.fetch_add(1, Relaxed);
    drop(job);
    Err(match why {
        Refusal::Full => {
            format!("server busy: {} {} requests are already queued; retry later", pool.capacity, pool.name)
        }
        Refusal::ClientShare(share) => format!(
            "server busy: this client already has {share} {} requests queued or running (its share); retry later",
            pool.name
        ),
    })
}

fn busy(message: String) -> Outcome {
    Either::B(NativeFailure { kind: ErrorKind::Overloaded, message, data: None })
}

/// The promise of a queued job, or one already resolved with the refusal.
fn answered<'env>(env: &'env Env, promise: Object<'env>, queued: Result<(), String>) -> napi::Result<Answer<'env>> {
    match queued {
        Ok(()) => Ok(typed(env, promise)),
        Err(message) => {
            let (reply, promise) = reply(env)?;
            reply(busy(message));
            Ok(typed(env, promise))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_a_request_is_an_internal_error_with_its_message() {
        let e = guarded(|| panic!("boom")).unwrap_err();
        assert!(matches!(e, preconf_chain::ChainError::Internal(InternalError::Panicked { .. })), "{e:?}");
        assert_eq!(e.to_string(), "the request panicked: boom");
    }
}

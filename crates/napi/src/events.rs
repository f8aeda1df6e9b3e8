//! Builder events delivered to JavaScript through a thread-safe function.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use parking_lot::Mutex;
use preconf_chain::builder::events::EventSink;

/// Called as `(kind, payload)` (FnArgs spreads the tuple into two arguments); weak, so a
/// queued event never keeps the process alive.
pub type EventCallback = ThreadsafeFunction<FnArgs<(String, String)>, (), FnArgs<(String, String)>, Status, false, true>;

#[derive(Default, Clone)]
pub struct EventHub {
    callback: Arc<Mutex<Option<Arc<EventCallback>>>>,
    interest: Arc<AtomicU32>,
}

impl EventHub {
    pub fn set(&self, callback: EventCallback) {
        *self.callback.lock() = Some(Arc::new(callback));
    }

    pub fn clear(&self) {
        self.callback.lock().take();
    }

    pub fn set_interest(&self, mask: u32) {
        self.interest.store(mask, Ordering::Relaxed);
    }

    pub fn interest(&self) -> u32 {
        self.interest.load(Ordering::Relaxed)
    }

    pub fn emit(&self, kind: &str, payload: String) {
        let cb = self.callback.lock().clone();
        if let Some(cb) = cb {
            cb.call((kind.to_string(), payload).into(), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

impl EventSink for EventHub {
    fn interest(&self) -> u32 {
        EventHub::interest(self)
    }

    fn emit(&self, kind: &str, payload: String) {
        EventHub::emit(self, kind, payload)
    }
}

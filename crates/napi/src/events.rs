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

/// One hub per JavaScript thread serving this node: each gets every event, on its own
/// event loop. The builder asks for the union of what they want.
#[derive(Default)]
pub struct Fanout {
    hubs: parking_lot::RwLock<Vec<EventHub>>,
}

impl Fanout {
    pub fn add(&self, hub: EventHub) {
        self.hubs.write().push(hub);
    }

    pub fn remove(&self, hub: &EventHub) {
        self.hubs.write().retain(|h| !Arc::ptr_eq(&h.interest, &hub.interest));
    }
}

impl EventSink for Fanout {
    fn interest(&self) -> u32 {
        self.hubs.read().iter().fold(0, |m, h| m | h.interest())
    }

    fn emit(&self, kind: &str, payload: String) {
        let hubs = self.hubs.read();
        if let Some((last, rest)) = hubs.split_last() {
            for h in rest {
                h.emit(kind, payload.clone());
            }
            last.emit(kind, payload);
        }
    }
}

//! preconf-napi: the thin N-API adapter. Each method takes canonical strings from the
//! TypeScript side, calls the chain's typed API, renders the result with preconf-rpc and
//! returns JSON text (spliced into the response unparsed) or a typed `NativeFailure`.
//! Work that must not run on an event loop goes to a thread pool of its cost class
//! (`work`). The generated `native/native.d.ts` is the contract with TypeScript.

// The shape of every method that answers with a promise (before the modules that use it).
#[macro_use]
mod methods;

mod calls;
mod dev;
mod engine;
mod events;
mod failure;
mod flashblocks_follow;
mod history;
pub mod import;
mod latin1;
mod log;
mod metrics;
mod options;
mod reads;
mod replication;
mod tools;
mod trace;
mod txpool;
// Called only from JavaScript (the test build registers no N-API functions).
#[cfg_attr(test, allow(dead_code))]
mod uws_guard;
mod work;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use napi::bindgen_prelude::{Either, Either3, Latin1String};
use napi::Env;
use napi_derive::napi;
use parking_lot::Mutex;
use preconf_chain::error::{UpstreamError, UpstreamFailure};
use preconf_chain::{ChainError, ChainResult, Node};

pub use events::EventKind;
pub use failure::{ErrorKind, NativeFailure};
pub use log::{set_log_sink, LogLevel};
pub use options::{default_options, NodeOptions};
pub use tools::{export_chain, verify_store};

use events::{EventCallback, EventHub, Fanout};
use failure::{outcome, Outcome};
use work::Answer;
use work::Class;

/// mimalloc: the chain allocates many small objects per request (EVM state, rendering);
/// docs/architecture.md says why and how it is configured.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A funded development account (the embedded dev chain's keys are public).
#[napi(object)]
pub struct DevAccountInfo {
    pub address: String,
    pub private_key: String,
}

#[napi(object)]
pub struct ChainInfo {
    pub chain_id: i64,
    pub genesis_hash: String,
    pub head: i64,
    pub client_version: String,
    pub accounts: Vec<DevAccountInfo>,
    /// Submissions never wait (no pool journal to sync): `sendRawTransactionInline` serves
    /// them on the event loop.
    pub submits_inline: bool,
}

/// Open nodes by handle, so worker threads can attach to the one node of the process.
type Registry = Mutex<HashMap<u32, (Arc<Node>, Arc<Fanout>)>>;
fn nodes() -> &'static Registry {
    static NODES: OnceLock<Registry> = OnceLock::new();
    NODES.get_or_init(Default::default)
}
static NEXT_HANDLE: AtomicU32 = AtomicU32::new(1);

thread_local! {
    /// The nodes opened or attached on this thread, by handle. The reads answered on the
    /// event loop are free functions that find their node here: a method of the class pays
    /// napi's unwrap, type-tag check and borrow bookkeeping on every call, more than the
    /// read itself costs.
    static ON_THIS_THREAD: RefCell<Vec<(u32, Arc<Node>)>> = const { RefCell::new(Vec::new()) };
}

fn enter_thread(handle: u32, node: &Arc<Node>) {
    ON_THIS_THREAD.with_borrow_mut(|open| open.push((handle, node.clone())));
}

fn leave_thread(handle: u32) {
    ON_THIS_THREAD.with_borrow_mut(|open| {
        if let Some(i) = open.iter().position(|(h, _)| *h == handle) {
            open.swap_remove(i);
        }
    });
}

/// The answer of a read from `read_methods!`: the JSON text (ASCII, so handed over as
/// Latin-1, which V8 copies instead of decoding), a failure, or a promise of either.
pub type ReadAnswer<'env> = Either3<Latin1String, NativeFailure, Answer<'env>>;

/// A read that answers at once unless it needs a forked chain's upstream: tried here
/// without waiting for it (memory and the fork's cache only); a value only the upstream
/// has sends the read to a thread of its own class, and the answer is a promise. Warm
/// reads keep the event loop's speed; a cold one never holds it.
#[cfg_attr(test, allow(dead_code))]
pub(crate) fn read_or_defer<'env>(
    env: &'env Env,
    handle: u32,
    read: impl Fn(&Node) -> ChainResult<String> + Send + 'static,
) -> napi::Result<ReadAnswer<'env>> {
    let now = ON_THIS_THREAD.with_borrow(|open| {
        let node = open.iter().find(|(h, _)| *h == handle).map(|(_, n)| n.clone());
        node.map(|node| (preconf_chain::fork::without_waiting(|| work::guarded(|| read(&node))), node))
    });
    let Some((now, node)) = now else {
        return Err(napi::Error::from_reason(format!("no node with handle {handle} is open on this thread")));
    };
    Ok(match now {
        Err(ChainError::Upstream(UpstreamError { failure: UpstreamFailure::WouldWait, .. })) => {
            Either3::C(work::run(env, Class::Upstream, None, move || read(&node))?)
        }
        other => match outcome(other) {
            Either::A(text) => Either3::A(latin1::json(text)),
            Either::B(failure) => Either3::B(failure),
        },
    })
}

#[napi]
pub struct NativeNode {
    node: Arc<Node>,
    hub: EventHub,
    fanout: Arc<Fanout>,
    handle: u32,
    /// The instance that opened the node (it stops the builder on close); the others are
    /// attached from worker threads.
    owner: bool,
}

impl NativeNode {
    pub(crate) fn sync(&self, read: impl FnOnce(&Node) -> ChainResult<String>) -> Outcome {
        outcome(work::guarded(|| read(&self.node)))
    }

    /// Runs `work` on a thread of `class`, in `client`'s turn (see `work`); the methods'
    /// shape is `work_methods!`.
    pub(crate) fn spawn_for<'env>(
        &self,
        env: &'env Env,
        class: Class,
        client: work::ClientKey,
        work: impl FnOnce(&Node) -> ChainResult<String> + Send + 'static,
    ) -> napi::Result<Answer<'env>> {
        let node = self.node.clone();
        work::run(env, class, client, move || work(&node))
    }
}

#[napi]
impl NativeNode {
    /// Opens the store (creating genesis on first start) and starts the builder.
    #[napi(factory)]
    pub fn open(options: NodeOptions) -> napi::Result<Self> {
        let node = Arc::new(Node::open(options.into_config()?).map_err(|e| napi::Error::from_reason(e.to_string()))?);
        let fanout = Arc::new(Fanout::new(node.chain().events().pool_interest(), node.chain().clone()));
        let events = node.chain().events().subscribe();
        let renderer = fanout.clone();
        std::thread::Builder::new()
            .name("preconf-events".into())
            .spawn(move || renderer.run(events))
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        let hub = EventHub::default();
        fanout.add(hub.clone());
        let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        nodes().lock().insert(handle, (node.clone(), fanout.clone()));
        enter_thread(handle, &node);
        Ok(Self { node, hub, fanout, handle, owner: true })
    }

    /// Attaches a worker thread to the node another thread opened (same store, same
    /// builder); it receives events on its own event loop.
    #[napi(factory)]
    pub fn attach(handle: u32) -> napi::Result<Self> {
        let (node, fanout) = nodes()
            .lock()
            .get(&handle)
            .cloned()
            .ok_or_else(|| napi::Error::from_reason(format!("no open node with handle {handle}")))?;
        let hub = EventHub::default();
        fanout.add(hub.clone());
        enter_thread(handle, &node);
        Ok(Self { node, hub, fanout, handle, owner: false })
    }

    /// What `attach` takes in another thread.
    #[napi]
    pub fn handle(&self) -> u32 {
        self.handle
    }

    #[napi]
    pub fn info(&self) -> ChainInfo {
        let chain = self.node.chain();
        let accounts = self
            .node
            .api()
            .submit
            .dev_accounts()
            .iter()
            .map(|a| DevAccountInfo { address: a.address.to_checksum(None), private_key: a.private_key.to_string() })
            .collect();
        ChainInfo {
            chain_id: chain.chain_id() as i64,
            genesis_hash: self.node.genesis_hash().to_string(),
            head: chain.view().head_number() as i64,
            client_version: preconf_chain::node::CLIENT_VERSION.to_string(),
            accounts,
            // A cluster's leader waits for the replicated log: never on an event loop.
            submits_inline: chain.journal().is_none() && !chain.config().cluster,
        }
    }

    /// `null` while healthy, or why the node is degraded (the builder stopped).
    #[napi]
    pub fn health(&self) -> Option<String> {
        self.node.chain().health()
    }

    /// Registers this event loop's receiver of chain events.
    #[napi]
    pub fn subscribe_events(&self, callback: EventCallback) {
        self.hub.set(callback);
    }

    /// Which event payloads this event loop wants rendered (`preconf` and `head` always are).
    #[napi]
    pub fn set_event_interest(&self, kinds: Vec<EventKind>) {
        self.fanout.set_interest(&self.hub, &kinds);
    }

    /// The opener stops the builder (sealing what was pre-confirmed); an attached instance
    /// only detaches its event receiver.
    #[napi]
    pub fn close(&self) {
        self.fanout.remove(&self.hub);
        self.hub.clear();
        leave_thread(self.handle);
        if self.owner {
            nodes().lock().remove(&self.handle);
            // First, so that a builder waiting for a full disk lets replication stop.
            self.node.chain().begin_closing();
            replication::stop(self.handle);
            flashblocks_follow::stop(self.handle);
            self.node.shutdown();
        }
    }
}

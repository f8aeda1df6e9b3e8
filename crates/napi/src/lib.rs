//! preconf-napi: the thin N-API adapter. Each method takes canonical strings from the
//! TypeScript side, calls the chain's typed API, renders the result with preconf-rpc and
//! returns JSON text (spliced into the response unparsed) or a typed `NativeFailure`.
//! Work that must not run on an event loop goes to a thread pool of its cost class
//! (`work`). The generated `native/native.d.ts` is the contract with TypeScript.

mod events;
mod failure;
mod options;
mod work;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use napi::bindgen_prelude::{Either, Object};
use napi::Env;
use napi_derive::napi;
use parking_lot::Mutex;
use preconf_chain::{ChainResult, Node};
use preconf_rpc::params;
use preconf_rpc::render::{self, block, log, receipt, simulate, to_json, transaction};

pub use events::EventKind;
pub use failure::{ErrorKind, NativeFailure};
pub use options::{default_options, NodeOptions};

use events::{EventCallback, EventHub, Fanout};
use failure::{outcome, Outcome};
use work::Class;

/// mimalloc: the chain allocates many small objects per request (EVM state, rendering);
/// measured faster than glibc malloc under concurrent load.
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
}

/// Open nodes by handle, so worker threads can attach to the one node of the process.
type Registry = Mutex<HashMap<u32, (Arc<Node>, Arc<Fanout>)>>;
fn nodes() -> &'static Registry {
    static NODES: OnceLock<Registry> = OnceLock::new();
    NODES.get_or_init(Default::default)
}
static NEXT_HANDLE: AtomicU32 = AtomicU32::new(1);

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
    fn sync(&self, read: impl FnOnce(&Node) -> ChainResult<String>) -> Outcome {
        outcome(read(&self.node))
    }

    fn spawn<'env>(
        &self,
        env: &'env Env,
        class: Class,
        work: impl FnOnce(&Node) -> ChainResult<String> + Send + 'static,
    ) -> napi::Result<Object<'env>> {
        let node = self.node.clone();
        work::run(env, class, move || work(&node))
    }
}

#[napi]
impl NativeNode {
    /// Opens the store (creating genesis on first start) and starts the builder.
    #[napi(factory)]
    pub fn open(options: NodeOptions) -> napi::Result<Self> {
        let node = Arc::new(Node::open(options.into_config()?).map_err(|e| napi::Error::from_reason(e.to_string()))?);
        let fanout = Arc::new(Fanout::default());
        let events = node.chain().events.subscribe();
        let renderer = fanout.clone();
        std::thread::Builder::new()
            .name("preconf-events".into())
            .spawn(move || renderer.run(events))
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        let hub = EventHub::default();
        fanout.add(hub.clone());
        let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        nodes().lock().insert(handle, (node.clone(), fanout.clone()));
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
        }
    }

    /// `null` while healthy, or why the node is degraded (the builder stopped).
    #[napi]
    pub fn health(&self) -> Option<String> {
        self.node.chain().health()
    }

    #[napi]
    pub fn block_number(&self) -> String {
        render::quantity(self.node.chain().view().head_number())
    }

    #[napi]
    pub fn get_balance(&self, address: String, block: String) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(render::quantity(n.api().state.balance(params::address(&address)?, params::block(&block)?)?)))
    }

    #[napi]
    pub fn get_transaction_count(&self, address: String, block: String) -> Either<String, NativeFailure> {
        self.sync(|n| {
            Ok(render::quantity(n.api().state.transaction_count(params::address(&address)?, params::block(&block)?)?))
        })
    }

    #[napi]
    pub fn get_code(&self, address: String, block: String) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(format!("\"{}\"", n.api().state.code(params::address(&address)?, params::block(&block)?)?)))
    }

    #[napi]
    pub fn get_storage_at(&self, address: String, slot: String, block: String) -> Either<String, NativeFailure> {
        self.sync(|n| {
            Ok(render::word(n.api().state.storage(
                params::address(&address)?,
                params::slot(&slot)?,
                params::block(&block)?,
            )?))
        })
    }

    /// A block with transaction hashes (`null` when it does not exist).
    #[napi]
    pub fn get_block(&self, block: String) -> Either<String, NativeFailure> {
        self.sync(|n| {
            Ok(n.api().blocks.by_id(params::block(&block)?)?.map_or("null".into(), |b| block::block(&b, false)))
        })
    }

    /// A block with full transaction objects: grows with the block, so off the event loop.
    #[napi(ts_return_type = "Promise<string | NativeFailure>")]
    pub fn get_block_full<'env>(&self, env: &'env Env, block: String) -> napi::Result<Object<'env>> {
        self.spawn(env, Class::Scans, move |n| {
            Ok(n.api().blocks.by_id(params::block(&block)?)?.map_or("null".into(), |b| block::block(&b, true)))
        })
    }

    #[napi(ts_return_type = "Promise<string | NativeFailure>")]
    pub fn get_block_receipts<'env>(&self, env: &'env Env, block: String) -> napi::Result<Object<'env>> {
        self.spawn(env, Class::Scans, move |n| {
            Ok(n.api().blocks.by_id(params::block(&block)?)?.map_or("null".into(), |b| receipt::block_receipts(&b)))
        })
    }

    #[napi]
    pub fn get_block_transaction_count(&self, block: String) -> Either<String, NativeFailure> {
        self.sync(|n| {
            Ok(n.api().blocks.by_id(params::block(&block)?)?.map_or("null".into(), |b| render::quantity(b.txs.len())))
        })
    }

    /// `index` is a 0x quantity.
    #[napi]
    pub fn get_transaction_by_block_and_index(&self, block: String, index: String) -> Either<String, NativeFailure> {
        self.sync(|n| {
            let index = usize::from_str_radix(index.trim_start_matches("0x"), 16).unwrap_or(usize::MAX);
            let found = n.api().blocks.by_id(params::block(&block)?)?;
            Ok(match found {
                Some(b) if index < b.txs.len() => {
                    let t = &b.txs[index];
                    to_json(&transaction::transaction(&t.tx, t.sender, Some(render::TxPosition::in_block(&b, index))))
                }
                _ => "null".into(),
            })
        })
    }

    #[napi]
    pub fn get_transaction(&self, hash: String) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(transaction::lookup(n.api().transactions.by_hash(params::hash(&hash)?)?)))
    }

    #[napi]
    pub fn get_transaction_receipt(&self, hash: String) -> Either<String, NativeFailure> {
        self.sync(|n| {
            Ok(n.api()
                .transactions
                .receipt(params::hash(&hash)?)?
                .map_or("null".into(), |(b, i)| receipt::receipt_in_block(&b, i)))
        })
    }

    /// The receipt of a pre-confirmed or sealed transaction, whatever `preconfReceipts`
    /// says (eth_sendRawTransactionSync answers with it).
    #[napi]
    pub fn get_preconfirmed_receipt(&self, hash: String) -> Either<String, NativeFailure> {
        self.sync(|n| {
            let found = n.api().transactions.preconfirmed_receipt(params::hash(&hash)?)?;
            Ok(found.map_or("null".into(), |(b, i)| receipt::receipt_in_block(&b, i)))
        })
    }

    /// Where a transaction is: pooled (pending/queued), pre-confirmed, included, dropped.
    #[napi]
    pub fn tx_status(&self, hash: String) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(transaction::progress(&n.api().transactions.progress(params::hash(&hash)?)?)))
    }

    #[napi(ts_return_type = "Promise<string | NativeFailure>")]
    pub fn call<'env>(&self, env: &'env Env, request: String) -> napi::Result<Object<'env>> {
        self.spawn(env, Class::Calls, move |n| {
            let p: params::CallParams = params::json(&request, "call request")?;
            let out = n.api().execution.call(
                &p.tx,
                params::block(&p.block)?,
                p.state_overrides.as_ref(),
                p.block_overrides.as_ref(),
            )?;
            Ok(format!("\"{out}\""))
        })
    }

    #[napi(ts_return_type = "Promise<string | NativeFailure>")]
    pub fn estimate_gas<'env>(&self, env: &'env Env, request: String) -> napi::Result<Object<'env>> {
        self.spawn(env, Class::Calls, move |n| {
            let p: params::EstimateParams = params::json(&request, "estimate request")?;
            Ok(render::quantity(n.api().execution.estimate_gas(
                &p.tx,
                params::block(&p.block)?,
                p.state_overrides.as_ref(),
            )?))
        })
    }

    #[napi(ts_return_type = "Promise<string | NativeFailure>")]
    pub fn simulate<'env>(&self, env: &'env Env, request: String) -> napi::Result<Object<'env>> {
        self.spawn(env, Class::Simulate, move |n| {
            let p: params::SimulateParams = params::json(&request, "simulation request")?;
            let blocks = n.api().execution.simulate(&p.payload, params::block(&p.block)?)?;
            Ok(simulate::simulated_blocks(&blocks, p.payload.return_full_transactions))
        })
    }

    #[napi(ts_return_type = "Promise<string | NativeFailure>")]
    pub fn send_raw_transaction<'env>(&self, env: &'env Env, raw: String) -> napi::Result<Object<'env>> {
        self.spawn(env, Class::Submit, move |n| {
            Ok(format!("\"{:#x}\"", n.api().submit.submit_raw(params::raw_tx(&raw)?)?))
        })
    }

    /// eth_sendTransaction for the dev chain's funded accounts.
    #[napi(ts_return_type = "Promise<string | NativeFailure>")]
    pub fn send_transaction<'env>(&self, env: &'env Env, request: String) -> napi::Result<Object<'env>> {
        self.spawn(env, Class::Calls, move |n| {
            let tx = params::json(&request, "transaction")?;
            Ok(format!("\"{:#x}\"", n.api().submit.send_transaction(&tx)?))
        })
    }

    /// Addresses eth_sendTransaction can sign for (the dev chain's accounts; none otherwise).
    #[napi]
    pub fn accounts(&self) -> String {
        let list: Vec<String> =
            self.node.api().submit.dev_accounts().iter().map(|a| format!("{:#x}", a.address)).collect();
        to_json(&list)
    }

    #[napi(ts_return_type = "Promise<string | NativeFailure>")]
    pub fn get_logs<'env>(&self, env: &'env Env, filter: String) -> napi::Result<Object<'env>> {
        self.spawn(env, Class::Scans, move |n| Ok(log::found_logs(&n.api().logs.query(&params::log_query(&filter)?)?)))
    }

    #[napi(ts_return_type = "Promise<string | NativeFailure>")]
    pub fn fee_history<'env>(&self, env: &'env Env, request: String) -> napi::Result<Object<'env>> {
        self.spawn(env, Class::Scans, move |n| {
            let p: params::FeeHistoryParams = params::json(&request, "fee history request")?;
            Ok(to_json(&n.api().fees.fee_history(
                p.block_count,
                params::block(&p.newest_block)?,
                &p.reward_percentiles,
            )?))
        })
    }

    #[napi]
    pub fn gas_price(&self) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(render::quantity(n.api().fees.gas_price()?)))
    }

    #[napi]
    pub fn max_priority_fee_per_gas(&self) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(render::quantity(n.api().fees.suggested_tip()?)))
    }

    /// Registers this event loop's receiver of chain events.
    #[napi(ts_args_type = "callback: (kind: EventKind, payload: string) => void")]
    pub fn subscribe_events(&self, callback: EventCallback) {
        self.hub.set(callback);
    }

    /// Which event payloads this event loop wants rendered (`preconf` and `head` always are).
    #[napi]
    pub fn set_event_interest(&self, kinds: Vec<EventKind>) {
        self.hub.set_interest(&kinds);
    }

    /// The opener stops the builder (sealing what was pre-confirmed); an attached instance
    /// only detaches its event receiver.
    #[napi]
    pub fn close(&self) {
        self.fanout.remove(&self.hub);
        self.hub.clear();
        if self.owner {
            nodes().lock().remove(&self.handle);
            self.node.shutdown();
        }
    }
}

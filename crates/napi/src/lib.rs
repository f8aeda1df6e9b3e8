//! preconf-napi: the thin N-API adapter over preconf-chain. It converts strings at the
//! boundary, runs heavy work off the JavaScript thread, and encodes every result as one
//! string: JSON text of the result, or `E{"kind","message","data"?}` for a typed failure
//! (see src/native.ts). napi errors (exceptions) are kept for boundary bugs.

mod events;
mod jobs;

use std::sync::Arc;

use alloy_primitives::{Address, B256, U256};
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use preconf_chain::{exec, rpc, BlockId, ChainError, ChainResult, Node, NodeConfig};
use serde_json::{json, Value};

use jobs::Job;

/// mimalloc: the chain allocates many small objects per request (JSON values, EVM state);
/// measured faster than glibc malloc under concurrent load.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Encodes a result for the boundary.
fn encode(r: ChainResult<Value>) -> String {
    match r {
        Ok(v) => v.to_string(),
        Err(e) => format!("E{}", e.to_json()),
    }
}

fn parse_address(s: &str) -> ChainResult<Address> {
    s.parse().map_err(|_| ChainError::InvalidParams(format!("invalid address {s}")))
}

fn parse_hash(s: &str) -> ChainResult<B256> {
    s.parse().map_err(|_| ChainError::InvalidParams(format!("invalid hash {s}")))
}

#[napi]
pub struct NativeNode {
    node: Arc<Node>,
    events: events::EventHub,
    fanout: Arc<events::Fanout>,
    handle: u32,
    /// The instance that opened the node (it stops the builder on close); the others are
    /// attached from worker threads.
    owner: bool,
}

/// Open nodes by handle, so worker threads can attach to the one node of the process.
static NODES: std::sync::OnceLock<parking_lot::Mutex<std::collections::HashMap<u32, (Arc<Node>, Arc<events::Fanout>)>>> =
    std::sync::OnceLock::new();
static NEXT_HANDLE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

fn nodes() -> &'static parking_lot::Mutex<std::collections::HashMap<u32, (Arc<Node>, Arc<events::Fanout>)>> {
    NODES.get_or_init(Default::default)
}

#[napi]
impl NativeNode {
    /// Opens the store (creating genesis on first start) and starts the builder.
    #[napi(factory)]
    pub fn open(config: String) -> napi::Result<Self> {
        let config: NodeConfig = serde_json::from_str(&config)
            .map_err(|e| napi::Error::from_reason(format!("invalid node config: {e}")))?;
        let node = Arc::new(Node::open(config).map_err(|e| napi::Error::from_reason(e.to_string()))?);
        let events = events::EventHub::default();
        let fanout = Arc::new(events::Fanout::default());
        fanout.add(events.clone());
        node.set_event_sink(fanout.clone());
        node.start().map_err(|e| napi::Error::from_reason(e.to_string()))?;
        let handle = NEXT_HANDLE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        nodes().lock().insert(handle, (node.clone(), fanout.clone()));
        Ok(Self { node, events, fanout, handle, owner: true })
    }

    /// Attaches a worker thread to the node another thread opened (same store, same
    /// builder); it receives builder events on its own event loop.
    #[napi(factory)]
    pub fn attach(handle: u32) -> napi::Result<Self> {
        let (node, fanout) = nodes()
            .lock()
            .get(&handle)
            .cloned()
            .ok_or_else(|| napi::Error::from_reason(format!("no open node with handle {handle}")))?;
        let events = events::EventHub::default();
        fanout.add(events.clone());
        Ok(Self { node, events, fanout, handle, owner: false })
    }

    /// What `attach` takes in another thread.
    #[napi]
    pub fn handle(&self) -> u32 {
        self.handle
    }

    #[napi]
    pub fn info(&self) -> String {
        let view = self.node.view();
        let accounts: Vec<Value> = self
            .node
            .dev_accounts
            .iter()
            .map(|a| json!({ "address": a.address.to_checksum(None), "privateKey": a.private_key.to_string() }))
            .collect();
        json!({
            "chainId": self.node.chain_id(),
            "genesisHash": self.node.genesis_hash().to_string(),
            "head": view.head_number(),
            "clientVersion": preconf_chain::node::CLIENT_VERSION,
            "accounts": accounts,
        })
        .to_string()
    }

    /// `null` while healthy, or why the node is degraded (the builder stopped).
    #[napi]
    pub fn health(&self) -> String {
        encode(Ok(self.node.health().map(Value::String).unwrap_or(Value::Null)))
    }

    #[napi]
    pub fn block_number(&self) -> String {
        format!("\"{:#x}\"", self.node.view().head_number())
    }

    #[napi]
    pub fn get_balance(&self, address: String, block: String) -> String {
        match (|| self.node.balance(parse_address(&address)?, BlockId::parse(&block)?))() {
            Ok(v) => format!("\"{v:#x}\""),
            Err(e) => encode(Err(e)),
        }
    }

    #[napi]
    pub fn get_transaction_count(&self, address: String, block: String) -> String {
        encode((|| Ok(rpc::qty(self.node.transaction_count(parse_address(&address)?, BlockId::parse(&block)?)?)))())
    }

    #[napi]
    pub fn get_code(&self, address: String, block: String) -> String {
        match (|| self.node.code(parse_address(&address)?, BlockId::parse(&block)?))() {
            Ok(code) => format!("\"{code}\""),
            Err(e) => encode(Err(e)),
        }
    }

    #[napi]
    pub fn get_storage_at(&self, address: String, slot: String, block: String) -> String {
        encode((|| {
            let slot: U256 = slot.parse().map_err(|_| ChainError::InvalidParams(format!("invalid slot {slot}")))?;
            let v = self.node.storage(parse_address(&address)?, slot, BlockId::parse(&block)?)?;
            Ok(rpc::u256_word(v))
        })())
    }

    #[napi]
    pub fn get_block(&self, block: String, full: bool) -> String {
        encode((|| self.node.block_json(BlockId::parse(&block)?, full))())
    }

    #[napi]
    pub fn get_block_receipts(&self, block: String) -> String {
        encode((|| self.node.block_receipts_json(BlockId::parse(&block)?))())
    }

    #[napi]
    pub fn get_transaction(&self, hash: String) -> String {
        encode((|| self.node.transaction_json(parse_hash(&hash)?))())
    }

    #[napi]
    pub fn get_transaction_receipt(&self, hash: String) -> String {
        encode((|| self.node.receipt_json(parse_hash(&hash)?))())
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn call(&self, request: String) -> AsyncTask<Job> {
        let node = self.node.clone();
        Job::spawn(move || {
            let params: exec::call::CallParams = exec::request::parse(&request, "call request")?;
            Ok(rpc::bytes(&exec::call::call(&node, &params)?))
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn estimate_gas(&self, request: String) -> AsyncTask<Job> {
        let node = self.node.clone();
        Job::spawn(move || {
            let params: exec::call::EstimateParams = exec::request::parse(&request, "estimate request")?;
            Ok(rpc::qty(exec::call::estimate_gas(&node, &params)?))
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn simulate(&self, request: String) -> AsyncTask<Job> {
        let node = self.node.clone();
        Job::spawn(move || {
            let params: exec::simulate::SimulateParams = exec::request::parse(&request, "simulation request")?;
            exec::simulate::simulate(&node, &params)
        })
    }

    /// Runs on the dedicated submission threads (see jobs::SubmitPool).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn send_raw_transaction<'env>(&self, env: &'env napi::Env, raw: String) -> napi::Result<napi::bindgen_prelude::Object<'env>> {
        let node = self.node.clone();
        jobs::SubmitPool::run(env, move || {
            let bytes: alloy_primitives::Bytes =
                raw.parse().map_err(|_| ChainError::InvalidParams("raw transaction is not valid hex".into()))?;
            Ok(rpc::hash(&node.submit_raw(bytes)?))
        })
    }

    /// eth_sendTransaction for the dev chain's funded accounts.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn send_transaction(&self, request: String) -> AsyncTask<Job> {
        let node = self.node.clone();
        Job::spawn(move || {
            let tx: exec::request::CallRequest = exec::request::parse(&request, "transaction")?;
            Ok(rpc::hash(&node.send_transaction(&tx)?))
        })
    }

    /// Addresses eth_sendTransaction can sign for (the dev chain's accounts; none otherwise).
    #[napi]
    pub fn accounts(&self) -> String {
        let list: Vec<Value> = self.node.dev_accounts.iter().map(|a| rpc::addr(&a.address)).collect();
        Value::Array(list).to_string()
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn get_logs(&self, filter: String) -> AsyncTask<Job> {
        let node = self.node.clone();
        Job::spawn(move || {
            let filter: preconf_chain::logs::LogFilter = exec::request::parse(&filter, "log filter")?;
            node.logs(&filter)
        })
    }

    #[napi]
    pub fn fee_history(&self, request: String) -> String {
        encode((|| {
            let params: preconf_chain::fees::FeeHistoryParams = exec::request::parse(&request, "fee history request")?;
            self.node.fee_history(&params)
        })())
    }

    #[napi]
    pub fn gas_price(&self) -> String {
        encode(self.node.gas_price().map(rpc::qty))
    }

    #[napi]
    pub fn max_priority_fee_per_gas(&self) -> String {
        encode(self.node.suggested_tip().map(rpc::qty))
    }

    /// Where a transaction is: pooled (pending/queued), pre-confirmed, included, dropped.
    #[napi]
    pub fn tx_status(&self, hash: String) -> String {
        encode((|| self.node.tx_status_json(parse_hash(&hash)?))())
    }

    /// Registers the JavaScript receiver of builder events.
    #[napi(ts_args_type = "callback: (kind: string, payload: string) => void")]
    pub fn subscribe_events(&self, callback: events::EventCallback) {
        self.events.set(callback);
    }

    /// Which event payloads JavaScript wants rendered (a bit mask; see src/native.ts).
    #[napi]
    pub fn set_event_interest(&self, mask: u32) {
        self.events.set_interest(mask);
    }

    /// The opener stops the builder (sealing what was pre-confirmed); an attached instance
    /// only detaches its event receiver.
    #[napi]
    pub fn close(&self) {
        self.fanout.remove(&self.events);
        self.events.clear();
        if self.owner {
            nodes().lock().remove(&self.handle);
            self.node.shutdown();
        }
    }
}

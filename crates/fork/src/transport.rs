//! JSON-RPC over HTTP or WebSocket to the upstream: every request a batch, each attempt
//! under the request timeout and the rate limit, retried with a growing backoff when the
//! upstream stalls, breaks the connection, answers 429/5xx or a rate-limit error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use preconf_chain::error::{UpstreamError, UpstreamFailure};
use serde_json::{json, Value};

use crate::limit::RateLimit;
use crate::resolve::KeptResolver;
use crate::ws::{WsError, WsLink};
use crate::ForkOptions;

/// One JSON-RPC call of a batch.
#[derive(Clone, Debug)]
pub struct Call {
    pub method: &'static str,
    pub params: Value,
}

impl Call {
    pub fn new(method: &'static str, params: Value) -> Self {
        Self { method, params }
    }
}

/// Each call's answer, in the order asked.
pub type Answers = Vec<Result<Value, UpstreamFailure>>;

/// How requests reach the upstream.
enum Link {
    Http(ureq::Agent),
    Ws(Box<WsLink>),
}

pub struct Transport {
    link: Link,
    url: String,
    /// The URL without credentials, path or query (API keys live there).
    name: String,
    headers: Vec<(String, String)>,
    retries: u32,
    backoff: Duration,
    timeout_ms: u64,
    limit: Option<RateLimit>,
    /// Requests sent (each a batch: an HTTP request or a WebSocket message), for the logs and tests.
    pub requests: AtomicU64,
}

/// Providers refuse larger batches (100 to 1,000): chunks of this many calls.
pub const MAX_BATCH: usize = 100;

impl Transport {
    pub fn new(options: &ForkOptions) -> Result<Self, UpstreamError> {
        let name = upstream_name(&options.url);
        let timeout = Duration::from_millis(options.timeout_ms);
        let scheme = options.url.split_once("://").map_or("", |(s, _)| s).to_ascii_lowercase();
        let link = match scheme.as_str() {
            "http" | "https" => {
                let config =
                    ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).build();
                let connector = ureq::unversioned::transport::DefaultConnector::new();
                Link::Http(ureq::Agent::with_parts(config, connector, KeptResolver::default()))
            }
            "ws" | "wss" => {
                Link::Ws(Box::new(WsLink::new(&options.url, &options.headers, timeout).map_err(|reason| {
                    UpstreamError {
                        upstream: name.clone(),
                        failure: UpstreamFailure::Transport { reason, attempts: 0 },
                    }
                })?))
            }
            _ => return Err(UpstreamError { upstream: name, failure: UpstreamFailure::Scheme }),
        };
        Ok(Self {
            link,
            url: options.url.clone(),
            name,
            headers: options.headers.clone(),
            retries: options.retries,
            backoff: Duration::from_millis(options.retry_backoff_ms),
            timeout_ms: options.timeout_ms,
            limit: options.compute_units_per_second.map(RateLimit::new),
            requests: AtomicU64::new(0),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn error(&self, failure: UpstreamFailure) -> UpstreamError {
        UpstreamError { upstream: self.name.clone(), failure }
    }

    /// Sends `calls` (in chunks of `MAX_BATCH`) and returns each one's answer.
    pub fn batch(&self, calls: &[Call]) -> Result<Answers, UpstreamError> {
        let mut answers = Vec::with_capacity(calls.len());
        for chunk in calls.chunks(MAX_BATCH) {
            answers.extend(self.batch_once(chunk).map_err(|f| self.error(f))?);
        }
        Ok(answers)
    }

    fn batch_once(&self, calls: &[Call]) -> Result<Answers, UpstreamFailure> {
        let body: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(id, c)| json!({ "jsonrpc": "2.0", "id": id, "method": c.method, "params": c.params }))
            .collect();
        let body = Value::Array(body).to_string();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            if let Some(limit) = &self.limit {
                limit.take(calls.iter().map(|c| compute_units(c.method)).sum());
            }
            match self.send(&body, calls, attempt) {
                Ok(answers) => return Ok(answers),
                Err((failure, retry)) if !retry || attempt > self.retries => return Err(failure),
                Err(_) => std::thread::sleep(self.backoff.saturating_mul(1 << (attempt - 1).min(6))),
            }
        }
    }

    /// One attempt; the failure says whether another attempt may succeed.
    fn send(&self, body: &str, calls: &[Call], attempts: u32) -> Result<Answers, (UpstreamFailure, bool)> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let text = match &self.link {
            Link::Http(agent) => self.post(agent, body, attempts)?,
            Link::Ws(ws) => ws.exchange(body).map_err(|e| self.ws_failure(e, attempts))?,
        };
        parse_batch(&text, calls, attempts)
    }

    /// A WebSocket failure as an HTTP one would be: the same errors, the same retries.
    fn ws_failure(&self, e: WsError, attempts: u32) -> (UpstreamFailure, bool) {
        match e {
            WsError::Timeout => (UpstreamFailure::Timeout { ms: self.timeout_ms, attempts }, true),
            WsError::Broken(reason) => (UpstreamFailure::Transport { reason, attempts }, true),
            WsError::Status(429) => (UpstreamFailure::RateLimited { status: 429, attempts }, true),
            WsError::Status(status) => (UpstreamFailure::Http { status }, status >= 500),
        }
    }

    /// One HTTP POST of `body`; the answer's text.
    fn post(&self, agent: &ureq::Agent, body: &str, attempts: u32) -> Result<String, (UpstreamFailure, bool)> {
        let mut request = agent.post(&self.url).header("content-type", "application/json");
        for (k, v) in &self.headers {
            request = request.header(k, v);
        }
        let mut response = request.send(body).map_err(|e| (self.transport_failure(e, attempts), true))?;
        let status = response.status().as_u16();
        if status == 429 {
            return Err((UpstreamFailure::RateLimited { status, attempts }, true));
        }
        if status >= 500 {
            return Err((UpstreamFailure::Http { status }, true));
        }
        let text = response
            .body_mut()
            .with_config()
            .limit(512 << 20)
            .read_to_string()
            .map_err(|e| (self.transport_failure(e, attempts), true))?;
        if !(200..300).contains(&status) {
            return Err((UpstreamFailure::Http { status }, false));
        }
        Ok(text)
    }

    fn transport_failure(&self, e: ureq::Error, attempts: u32) -> UpstreamFailure {
        match e {
            ureq::Error::Timeout(_) => UpstreamFailure::Timeout { ms: self.timeout_ms, attempts },
            other => UpstreamFailure::Transport { reason: other.to_string(), attempts },
        }
    }
}

/// Matches a batch's answers to its calls by id. A whole-batch error (some upstreams
/// answer a refused batch with one error object) fails every call.
fn parse_batch(text: &str, calls: &[Call], attempts: u32) -> Result<Answers, (UpstreamFailure, bool)> {
    let malformed = |reason: String| (UpstreamFailure::Malformed { method: calls[0].method, reason }, false);
    let value: Value = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
    let items = match value {
        Value::Array(items) => items,
        Value::Object(_) => {
            let failure = rpc_failure(calls[0].method, &value["error"]);
            let retry = is_rate_limit(&value["error"]);
            let failure = if retry { UpstreamFailure::RateLimited { status: 200, attempts } } else { failure };
            return Err((failure, retry));
        }
        _ => return Err(malformed("not a batch answer".into())),
    };
    let mut answers: Vec<Option<Result<Value, UpstreamFailure>>> = (0..calls.len()).map(|_| None).collect();
    for mut item in items {
        let Some(id) = item["id"].as_u64().map(|i| i as usize).filter(|i| *i < calls.len()) else { continue };
        let error = item["error"].take();
        answers[id] = Some(if error.is_null() {
            Ok(item["result"].take())
        } else if is_rate_limit(&error) {
            return Err((UpstreamFailure::RateLimited { status: 200, attempts }, true));
        } else {
            Err(rpc_failure(calls[id].method, &error))
        });
    }
    answers
        .into_iter()
        .enumerate()
        .map(|(i, a)| a.ok_or_else(|| malformed(format!("no answer for call {i}"))))
        .collect::<Result<_, _>>()
}

fn rpc_failure(method: &'static str, error: &Value) -> UpstreamFailure {
    UpstreamFailure::Rpc {
        method,
        code: error["code"].as_i64().unwrap_or(0),
        message: error["message"].as_str().unwrap_or("").to_string(),
    }
}

/// 429 (Alchemy, Infura), -32005 (the limit code) or words saying so.
fn is_rate_limit(error: &Value) -> bool {
    let code = error["code"].as_i64().unwrap_or(0);
    let message = error["message"].as_str().unwrap_or("").to_ascii_lowercase();
    code == 429 || code == -32005 || message.contains("rate limit") || message.contains("too many requests")
}

/// The compute units providers charge per method (Alchemy's table, which anvil's
/// `--compute-units-per-second` follows).
fn compute_units(method: &str) -> u64 {
    match method {
        "eth_chainId" => 0,
        "eth_getStorageAt" => 17,
        "eth_getBalance" => 19,
        "eth_getBlockByNumber" => 16,
        "eth_getTransactionCount" | "eth_getCode" => 26,
        "eth_getTransactionReceipt" => 15,
        "eth_getTransactionByHash" | "eth_getBlockByHash" => 17,
        "eth_getLogs" => 75,
        "eth_getBlockReceipts" => 500,
        "debug_traceCall" => 170,
        _ => 26,
    }
}

/// `scheme://host[:port]` of a URL: what errors and the store's record show.
pub fn upstream_name(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    format!("{scheme}://{host}")
}

/// The URL as `anvil_nodeInfo` shows it: as given when it has no credentials, path (but
/// `/`), query or fragment, where providers put API keys; otherwise the upstream's name.
/// anvil shows it verbatim, but the test methods answer any client of the node, and a key
/// read there is a key usable elsewhere (docs/fork.md).
pub fn shown_url(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match !authority.contains('@') && (tail.is_empty() || tail == "/") {
        true => url.to_string(),
        false => upstream_name(url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_hide_credentials_and_keys() {
        assert_eq!(upstream_name("https://user:pw@eth.example:8545/v2/KEY?x=1"), "https://eth.example:8545");
        assert_eq!(upstream_name("http://127.0.0.1:8545"), "http://127.0.0.1:8545");
    }

    #[test]
    fn shown_urls_keep_keyless_urls_verbatim() {
        assert_eq!(shown_url("http://127.0.0.1:8545"), "http://127.0.0.1:8545");
        assert_eq!(shown_url("ws://127.0.0.1:8545/"), "ws://127.0.0.1:8545/");
        assert_eq!(shown_url("https://eth.example/v2/KEY"), "https://eth.example");
        assert_eq!(shown_url("https://eth.example/?apikey=KEY"), "https://eth.example");
        assert_eq!(shown_url("https://eth.example#KEY"), "https://eth.example");
        assert_eq!(shown_url("https://user:pw@eth.example:8545"), "https://eth.example:8545");
    }

    #[test]
    fn answers_match_calls_by_id_and_rate_limits_retry() {
        let calls = [Call::new("eth_getBalance", json!([])), Call::new("eth_getCode", json!([]))];
        let text = r#"[{"id":1,"result":"0x60"},{"id":0,"error":{"code":-32000,"message":"boom"}}]"#;
        let answers = parse_batch(text, &calls, 1).unwrap();
        assert_eq!(answers[1], Ok(json!("0x60")));
        assert!(matches!(&answers[0], Err(UpstreamFailure::Rpc { code: -32000, .. })));
        let limited = r#"{"id":null,"error":{"code":429,"message":"Too Many Requests"}}"#;
        assert!(matches!(parse_batch(limited, &calls, 1), Err((UpstreamFailure::RateLimited { .. }, true))));
    }
}

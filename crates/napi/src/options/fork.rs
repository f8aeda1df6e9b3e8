//! `--fork-url` and its companions (anvil's flags) as the fork crate's options.

use std::sync::Arc;

use preconf_chain::fork::ForkSource;
use preconf_fork::{ForkClient, ForkOptions};

use super::NodeOptions;

/// The upstream source of a forked chain, when `forkUrl` is set.
pub fn fork_source(o: &NodeOptions) -> napi::Result<Option<ForkSource>> {
    let Some(url) = &o.fork_url else { return Ok(None) };
    let mut options = ForkOptions::new(url.clone());
    options.block = o.fork_block_number.map(|n| non_negative("forkBlockNumber", n)).transpose()?;
    options.chain_id = o.fork_chain_id.map(|n| non_negative("forkChainId", n)).transpose()?;
    if let Some(r) = o.fork_retries {
        options.retries = r;
    }
    if let Some(ms) = o.fork_retry_backoff_ms {
        options.retry_backoff_ms = u64::from(ms);
    }
    if let Some(ms) = o.fork_timeout_ms {
        options.timeout_ms = u64::from(ms);
    }
    // A loopback upstream is the operator's own node: no provider's budget to respect.
    let loopback = ["://127.", "://localhost", "://[::1]"].iter().any(|h| url.contains(h));
    options.compute_units_per_second = match (o.no_rate_limit, o.compute_units_per_second) {
        (Some(true), _) => None,
        (_, Some(cups)) => Some(u64::from(cups)),
        _ if loopback => None,
        _ => options.compute_units_per_second,
    };
    options.cache = !o.no_storage_caching.unwrap_or(false);
    for header in o.fork_headers.iter().flatten() {
        let (key, value) = header
            .split_once(':')
            .ok_or_else(|| napi::Error::from_reason(format!("--fork-header must be KEY:VALUE, got {header:?}")))?;
        options.headers.push((key.trim().to_string(), value.trim().to_string()));
    }
    let client = ForkClient::new(options).map_err(|e| napi::Error::from_reason(e.to_string()))?;
    Ok(Some(ForkSource(Arc::new(client))))
}

fn non_negative(name: &str, n: i64) -> napi::Result<u64> {
    u64::try_from(n).map_err(|_| napi::Error::from_reason(format!("{name} must not be negative, got {n}")))
}

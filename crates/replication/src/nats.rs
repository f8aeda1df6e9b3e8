//! The JetStream side shared by every role: the connection, the chain's stream and its
//! subjects, the lease bucket, and single-message reads.

use std::time::Duration;

use async_nats::jetstream::{self, kv, stream};
use async_nats::{Client, ConnectOptions, HeaderMap};
use bytes::Bytes;
use preconf_chain::wire::{self as codec, Kind, RewoundTo};

use crate::health::Health;
use std::sync::Arc;

/// How long JetStream remembers message ids (a republished duplicate is dropped).
const DUPLICATE_WINDOW: Duration = Duration::from_secs(120);
/// Bounds every request to the server: a dead server is noticed in seconds.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

pub type Error = Box<dyn std::error::Error + Send + Sync>;

pub fn subject(stream: &str, kind: Kind) -> String {
    format!("{stream}.{}", kind.subject())
}

/// A connection to any of `servers` that reconnects forever; `health` polls its state.
pub async fn connect(servers: &[String], name: &str, health: Arc<Health>) -> Result<Client, Error> {
    let addrs = servers.iter().map(|s| s.parse()).collect::<Result<Vec<async_nats::ServerAddr>, _>>()?;
    let client = ConnectOptions::new()
        .name(name)
        .retry_on_initial_connect()
        .ping_interval(Duration::from_secs(2))
        .connection_timeout(REQUEST_TIMEOUT)
        .request_timeout(Some(REQUEST_TIMEOUT))
        .reconnect_delay_callback(|attempts| Duration::from_millis((50 * attempts as u64).min(250)))
        .connect(addrs)
        .await?;
    let state = client.clone();
    health.set_connected(move || state.connection_state() == async_nats::connection::State::Connected);
    Ok(client)
}

pub fn jetstream(client: Client) -> jetstream::Context {
    let mut js = jetstream::new(client);
    js.set_timeout(REQUEST_TIMEOUT);
    js
}

/// The chain's stream, created on file storage with `replicas` copies when it does not
/// exist (an operator's own stream, with its own limits, is used as it is).
pub async fn ensure_stream(js: &jetstream::Context, name: &str, replicas: usize) -> Result<stream::Stream, Error> {
    if let Ok(s) = js.get_stream(name).await {
        return Ok(s);
    }
    let config = stream::Config {
        name: name.to_string(),
        subjects: vec![format!("{name}.>")],
        storage: stream::StorageType::File,
        retention: stream::RetentionPolicy::Limits,
        discard: stream::DiscardPolicy::Old,
        duplicate_window: DUPLICATE_WINDOW,
        num_replicas: replicas.max(1),
        allow_direct: true,
        description: Some("preconf-node: pre-confirmations, sealed blocks and accepted transactions, in order".into()),
        ..Default::default()
    };
    Ok(js.get_or_create_stream(config).await?)
}

/// The bucket of the cluster's leader lease (one key).
pub async fn ensure_lease_bucket(js: &jetstream::Context, stream: &str, replicas: usize) -> Result<kv::Store, Error> {
    let bucket = format!("{stream}-lease");
    if let Ok(kv) = js.get_key_value(&bucket).await {
        return Ok(kv);
    }
    let config = kv::Config {
        bucket,
        description: "preconf-node: the leader lease of the stream's cluster".into(),
        history: 1,
        storage: stream::StorageType::File,
        num_replicas: replicas.max(1),
        ..Default::default()
    };
    Ok(js.create_key_value(config).await?)
}

/// The stream's newest sequence (0 when it is empty).
pub async fn last_seq(stream: &stream::Stream) -> Result<u64, Error> {
    Ok(stream.get_info().await?.state.last_sequence)
}

/// One stored message: its payload and headers, `None` when the stream does not hold it.
pub async fn message_at(stream: &stream::Stream, seq: u64) -> Result<Option<(Bytes, HeaderMap)>, Error> {
    match stream.get_raw_message(seq).await {
        Ok(m) => Ok(Some((m.payload, m.headers))),
        Err(e) if matches!(e.kind(), stream::RawMessageErrorKind::NoMessageFound) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The newest message on the stream's `kind` subject, with its sequence.
pub async fn last_of(stream: &stream::Stream, name: &str, kind: Kind) -> Result<Option<(u64, Bytes)>, Error> {
    match stream.get_last_raw_message_by_subject(&subject(name, kind)).await {
        Ok(m) => Ok(Some((m.sequence, m.payload))),
        Err(e) if matches!(e.kind(), stream::LastRawMessageErrorKind::NoMessageFound) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Where the stream leaves its chain's head: the newer of its last sealed block and its
/// last rewind (op-node took blocks back), with that message's sequence.
pub async fn last_head(stream: &stream::Stream, name: &str) -> Result<Option<(u64, RewoundTo)>, String> {
    let mut newest: Option<(u64, RewoundTo)> = None;
    for kind in [Kind::Sealed, Kind::Rewound] {
        let Some((seq, data)) = last_of(stream, name, kind).await.map_err(|e| e.to_string())? else { continue };
        let head = codec::peek_head(&data).map_err(|e| e.to_string())?;
        if let Some(head) = head.filter(|_| newest.is_none_or(|(s, _)| s < seq)) {
            newest = Some((seq, head));
        }
    }
    Ok(newest)
}

/// One node's way to the chain's stream.
#[derive(Clone)]
pub struct Link {
    pub js: jetstream::Context,
    pub stream: stream::Stream,
    pub name: String,
    pub health: Arc<Health>,
}

impl Link {
    /// Connects (retrying until it works or `stop`) and opens the stream, creating it with
    /// `replicas` copies when it is missing.
    pub async fn open(
        servers: &[String],
        client_name: &str,
        name: &str,
        replicas: usize,
        health: Arc<Health>,
        stop: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Option<Self> {
        let client = loop {
            match connect(servers, client_name, health.clone()).await {
                Ok(c) => break c,
                Err(e) => health.fail(e),
            }
            if wait_or_stop(stop, Duration::from_millis(250)).await {
                return None;
            }
        };
        let js = jetstream(client);
        loop {
            match ensure_stream(&js, name, replicas).await {
                Ok(stream) => {
                    health.ok();
                    return Some(Self { js, stream, name: name.to_string(), health });
                }
                Err(e) => health.fail(format!("cannot open stream \"{name}\": {e}")),
            }
            if wait_or_stop(stop, Duration::from_millis(250)).await {
                return None;
            }
        }
    }
}

/// Sleeps `d`; true when `stop` was set meanwhile (or before).
pub async fn wait_or_stop(stop: &mut tokio::sync::watch::Receiver<bool>, d: Duration) -> bool {
    if *stop.borrow() {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => *stop.borrow(),
        _ = stop.changed() => true,
    }
}

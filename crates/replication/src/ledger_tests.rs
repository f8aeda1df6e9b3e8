//! The ledger against a real nats-server: fencing between two leaders' ledgers, and a
//! batch of concurrent transactions written as one message.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use preconf_chain::ledger::{Ledger, LedgerError, Record};
use preconf_chain::wire::{self as codec, Kind, Message};
use preconf_chain::{ChainConfig, Node};

use super::StreamLedger;
use crate::health::Health;
use crate::nats::{self, Link};

/// The nats-server `npm install` fetched (scripts/ensure-nats.mjs), or $NATS_SERVER_BIN.
fn nats_binary() -> std::path::PathBuf {
    if let Ok(p) = std::env::var("NATS_SERVER_BIN") {
        return p.into();
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cache/nats-server");
    let found = std::fs::read_dir(&root)
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.path().join("nats-server"))
        .find(|p| p.exists());
    found.unwrap_or_else(|| {
        panic!("no nats-server under {}: run `npm install` (or set NATS_SERVER_BIN)", root.display())
    })
}

struct Server {
    child: Child,
    url: String,
    dir: std::path::PathBuf,
}

impl Server {
    fn start(name: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("preconf-ledger-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let child = Command::new(nats_binary())
            .args(["-js", "-sd"])
            .arg(&dir)
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nats-server");
        Self { child, url: format!("nats://127.0.0.1:{port}"), dir }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn node() -> Arc<Node> {
    Arc::new(Node::open(ChainConfig { cluster: true, ..ChainConfig::default() }).expect("node"))
}

fn record(n: u64) -> Record {
    Record {
        kind: Kind::Term,
        number: n,
        index: 0,
        data: codec::encode_term(n, 0, &codec::TermStart { term: n, node: "t".into(), url: "u".into(), unix_ms: 0 }),
    }
}

#[test]
fn a_deposed_leaders_append_is_refused_and_batches_share_a_message() {
    let server = Server::start("fence");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let node = node();
    let chain = node.chain().clone();
    let health = Health::new(chain.clone(), "test".into(), Duration::from_secs(5));
    let (js, stream) = rt.block_on(async {
        let client = loop {
            if let Ok(c) = nats::connect(std::slice::from_ref(&server.url), "test", health.clone()).await {
                if c.flush().await.is_ok() {
                    break c;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let js = nats::jetstream(client);
        let stream = loop {
            match nats::ensure_stream(&js, "fence", 1).await {
                Ok(s) => break s,
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        };
        (js, stream)
    });
    let start = |term: u64, last: u64| {
        let link = Link { js: js.clone(), stream: stream.clone(), name: "fence".into(), health: health.clone() };
        StreamLedger::start(rt.handle(), chain.clone(), &link, &format!("n{term}"), term, last)
    };
    let old = start(1, 0);
    assert_eq!(old.append(record(1)).unwrap(), 1);
    // A new leader appends after what it read: the old one is fenced from then on.
    let new = start(2, 1);
    assert_eq!(new.append(record(2)).unwrap(), 2);
    match old.append(record(3)) {
        Err(LedgerError::Fenced(why)) => assert!(why.contains("another leader"), "{why}"),
        other => panic!("the old leader's append must be fenced, got {other:?}"),
    }
    assert!(matches!(old.failure(), Some(LedgerError::Fenced(_))));
    assert!(old.append_tx(alloy_primitives::Bytes::from_static(&[1])).is_err(), "nothing after a refusal");

    // Transactions appended together: one message holding all of them, in order.
    let sent: Vec<_> = (0..16u8).map(|i| alloy_primitives::Bytes::from(vec![0xc0 + (i % 4), i])).collect();
    let threads: Vec<_> = sent
        .iter()
        .cloned()
        .map(|raw| {
            let new = new.clone();
            std::thread::spawn(move || new.append_tx(raw))
        })
        .collect();
    for t in threads {
        t.join().unwrap().expect("appended");
    }
    let (first, last) = (3, new.last_seq());
    assert!(last - first + 1 < sent.len() as u64, "16 concurrent transactions took {} messages", last - first + 1);
    let mut written = Vec::new();
    for seq in first..=last {
        let (data, _) = rt.block_on(nats::message_at(&stream, seq)).unwrap().unwrap();
        match codec::decode(&data).unwrap() {
            Message::Txs(raws) => written.extend(raws),
            other => panic!("message {seq} is not a batch of transactions: {other:?}"),
        }
    }
    written.sort();
    let mut expected = sent.clone();
    expected.sort();
    assert_eq!(written, expected);
    new.close();
    drop(rt);
}

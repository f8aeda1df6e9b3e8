//! A cluster leader's ledger on the stream. Appends are written one after the other, each
//! naming the sequence it must follow, and fenced once another leader appended (what each
//! answer means is `rules::fence`). Accepted transactions that arrive while a message is on
//! its way are written together as the next one (one message per group of submissions).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, context::PublishErrorKind, message::PublishMessage, stream};
use bytes::Bytes;
use parking_lot::Mutex;
use preconf_chain::chain_state::ChainState;
use preconf_chain::ledger::{Ledger, LedgerError, Record};
use preconf_chain::wire::{self as codec, Kind};
use tokio::sync::{mpsc, oneshot, Notify};

use crate::health::Health;
use crate::nats::{self, Link, REQUEST_TIMEOUT};
use crate::rules::fence::{self, Answer, Found, Settled, Step};

const RETRY: Duration = Duration::from_millis(100);

enum Request {
    Record(Record, oneshot::Sender<Result<u64, LedgerError>>),
    Tx(Bytes, oneshot::Sender<Result<(), LedgerError>>),
}

struct Shared {
    /// The sequence of the newest message this leader has in the stream.
    last_seq: AtomicU64,
    failure: Mutex<Option<LedgerError>>,
    failed: Notify,
    closed: AtomicBool,
    close: Notify,
}

impl Shared {
    fn fail(&self, e: LedgerError) {
        let mut f = self.failure.lock();
        if f.is_none() {
            *f = Some(e);
            self.failed.notify_waiters();
            self.failed.notify_one();
        }
    }
}

pub struct StreamLedger {
    term: u64,
    stream: String,
    requests: mpsc::UnboundedSender<Request>,
    shared: Arc<Shared>,
}

impl StreamLedger {
    /// A ledger appending to `link`'s stream after sequence `last_seq`, for `term`, on the
    /// tokio runtime `rt`. Message ids are `node.term.n`.
    pub fn start(
        rt: &tokio::runtime::Handle,
        chain: Arc<ChainState>,
        link: &Link,
        node: &str,
        term: u64,
        last_seq: u64,
    ) -> Arc<Self> {
        let name = link.name.clone();
        let (requests, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            last_seq: AtomicU64::new(last_seq),
            failure: Mutex::new(None),
            failed: Notify::new(),
            closed: AtomicBool::new(false),
            close: Notify::new(),
        });
        let writer = Writer {
            chain,
            js: link.js.clone(),
            stream: link.stream.clone(),
            health: link.health.clone(),
            name: name.clone(),
            node: node.to_string(),
            term,
            shared: shared.clone(),
            sent: 0,
            block: 0,
        };
        rt.spawn(writer.run(rx));
        Arc::new(Self { term, stream: name, requests, shared })
    }

    pub fn last_seq(&self) -> u64 {
        self.shared.last_seq.load(Ordering::Acquire)
    }

    pub fn failure(&self) -> Option<LedgerError> {
        self.shared.failure.lock().clone()
    }

    /// Resolves once an append was refused (or the ledger closed).
    pub async fn failed(&self) {
        loop {
            let wait = self.shared.failed.notified();
            if self.failure().is_some() {
                return;
            }
            wait.await;
        }
    }

    /// Refuses every append from now on; one on its way is abandoned (the stream decides
    /// whether it landed, as the follower will read).
    pub fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.close.notify_waiters();
        self.shared.close.notify_one();
        self.shared.fail(LedgerError::Closed);
    }

    /// `append`, from async code.
    pub async fn append_async(&self, record: Record) -> Result<u64, LedgerError> {
        let (tx, rx) = oneshot::channel();
        self.requests.send(Request::Record(record, tx)).map_err(|_| LedgerError::Closed)?;
        rx.await.unwrap_or(Err(LedgerError::Closed))
    }
}

impl Ledger for StreamLedger {
    fn append(&self, record: Record) -> Result<u64, LedgerError> {
        let (tx, rx) = oneshot::channel();
        self.requests.send(Request::Record(record, tx)).map_err(|_| LedgerError::Closed)?;
        rx.blocking_recv().unwrap_or(Err(LedgerError::Closed))
    }

    fn append_tx(&self, raw: alloy_primitives::Bytes) -> Result<(), LedgerError> {
        let (tx, rx) = oneshot::channel();
        self.requests.send(Request::Tx(Bytes::from(raw.to_vec()), tx)).map_err(|_| LedgerError::Closed)?;
        rx.blocking_recv().unwrap_or(Err(LedgerError::Closed))
    }

    fn term(&self) -> u64 {
        self.term
    }

    fn stream(&self) -> &str {
        &self.stream
    }
}

struct Writer {
    chain: Arc<ChainState>,
    js: jetstream::Context,
    stream: stream::Stream,
    health: Arc<Health>,
    name: String,
    node: String,
    term: u64,
    shared: Arc<Shared>,
    sent: u64,
    /// The block the newest record written was about (a sealed block's successor): accepted
    /// transactions are numbered no lower, so the stream stays in block order.
    block: u64,
}

/// Whoever waits for the message being written.
enum Waiters {
    Record(oneshot::Sender<Result<u64, LedgerError>>),
    Txs(Vec<oneshot::Sender<Result<(), LedgerError>>>),
}

impl Waiters {
    fn answer(self, r: Result<u64, LedgerError>) {
        match self {
            Waiters::Record(w) => {
                let _ = w.send(r);
            }
            Waiters::Txs(ws) => {
                for w in ws {
                    let _ = w.send(r.clone().map(|_| ()));
                }
            }
        }
    }
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Request>) {
        let mut queue: VecDeque<Request> = VecDeque::new();
        loop {
            if queue.is_empty() {
                match rx.recv().await {
                    Some(r) => queue.push_back(r),
                    None => return,
                }
            }
            while let Ok(r) = rx.try_recv() {
                queue.push_back(r);
            }
            let (kind, data, waiters) = self.next_message(&mut queue);
            let failure = self.shared.failure.lock().clone();
            let result = match failure {
                Some(e) => Err(e),
                None => self.write(kind, data).await,
            };
            match result {
                Ok(seq) => {
                    self.shared.last_seq.store(seq, Ordering::Release);
                    waiters.answer(Ok(seq));
                }
                Err(e) => {
                    self.shared.fail(e.clone());
                    waiters.answer(Err(e.clone()));
                    // Nothing after a refusal: everything queued and to come is refused too.
                    rx.close();
                    while let Some(r) = queue.pop_front().or_else(|| rx.try_recv().ok()) {
                        match r {
                            Request::Record(_, w) => Waiters::Record(w).answer(Err(e.clone())),
                            Request::Tx(_, w) => Waiters::Txs(vec![w]).answer(Err(e.clone())),
                        }
                    }
                    return;
                }
            }
        }
    }

    /// The next message: the record at the front, or the transactions queued before the
    /// next record (up to a batch's bounds).
    fn next_message(&mut self, queue: &mut VecDeque<Request>) -> (Kind, Vec<u8>, Waiters) {
        if let Some(Request::Record(..)) = queue.front() {
            let Some(Request::Record(record, w)) = queue.pop_front() else { unreachable!() };
            // Block numbers go back only with a rewind (op-node took blocks off).
            self.block = match record.kind {
                Kind::Rewound => record.number + 1,
                kind => self.block.max(fence::about(kind, record.number)),
            };
            return (record.kind, record.data, Waiters::Record(w));
        }
        let (mut raws, mut waiters, mut bytes) = (Vec::new(), Vec::new(), 0);
        while fence::batch_has_room(raws.len(), bytes) {
            match queue.front() {
                Some(Request::Tx(..)) => {
                    let Some(Request::Tx(raw, w)) = queue.pop_front() else { unreachable!() };
                    bytes += raw.len();
                    raws.push(alloy_primitives::Bytes::from(raw));
                    waiters.push(w);
                }
                _ => break,
            }
        }
        let view = self.chain.view();
        let header = view.pending_header();
        let index = view.pending.as_ref().map_or(0, |p| p.preconf_index());
        let number = header.number.max(self.block);
        (Kind::Txs, codec::encode_txs(number, index, &raws), Waiters::Txs(waiters))
    }

    /// Writes one message after `last_seq`; its sequence once the stream holds it.
    async fn write(&mut self, kind: Kind, data: Vec<u8>) -> Result<u64, LedgerError> {
        self.sent += 1;
        let id = fence::message_id(&self.node, self.term, self.sent);
        let subject = nats::subject(&self.name, kind);
        let payload = Bytes::from(data);
        let expected = self.shared.last_seq.load(Ordering::Acquire);
        loop {
            if self.shared.closed.load(Ordering::Acquire) {
                return Err(LedgerError::Closed);
            }
            let publish =
                PublishMessage::build().payload(payload.clone()).message_id(&id).expected_last_sequence(expected);
            let attempt = async {
                let ack = self.js.send_publish(subject.clone(), publish).await?;
                ack.await
            };
            let closed = self.shared.close.notified();
            let outcome = tokio::select! {
                r = tokio::time::timeout(REQUEST_TIMEOUT, attempt) => r,
                _ = closed => return Err(LedgerError::Closed),
            };
            let answer = match outcome {
                Ok(Ok(ack)) => Answer::Stored(ack.sequence),
                Ok(Err(e)) if e.kind() == PublishErrorKind::WrongLastSequence => {
                    Answer::WrongLastSequence(e.to_string())
                }
                Ok(Err(e)) => Answer::Failed(e.to_string()),
                Err(_) => Answer::TimedOut,
            };
            let refused = match fence::answered(expected, answer) {
                Ok(seq) => {
                    self.health.ok();
                    return Ok(seq);
                }
                Err(refused) => refused,
            };
            // Did it land? The stream says.
            match self.settle(expected, &id).await {
                Ok(settled) => match fence::step(expected, settled, &refused) {
                    Step::Landed(seq) => return Ok(seq),
                    Step::Fenced(e) => return Err(e),
                    Step::Resend => {}
                },
                Err(e) => self.health.fail(format!("cannot append to the stream ({refused}), nor read it: {e}")),
            }
            tokio::time::sleep(RETRY).await;
        }
    }

    /// Who wrote the message after `expected`, read from the stream.
    async fn settle(&self, expected: u64, id: &str) -> Result<Settled, nats::Error> {
        let found = match nats::message_at(&self.stream, expected + 1).await? {
            None => Found::Nothing { last: nats::last_seq(&self.stream).await? },
            Some((_, headers)) => {
                Found::Message { id: headers.get("Nats-Msg-Id").map(|v| v.as_str().to_string()).unwrap_or_default() }
            }
        };
        Ok(fence::settle(expected, id, found))
    }
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;

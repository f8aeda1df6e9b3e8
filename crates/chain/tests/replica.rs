//! Replication without a transport: a real leader (builder running) and a replica node
//! (`build: false`), the leader's publisher fed from its event bus, its publications applied
//! to the replica with consecutive sequence numbers as a stream would number them.

use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

use alloy_primitives::{Address, Bytes, TxKind, U256};
use alloy_rpc_types_eth::TransactionRequest;
use preconf_chain::events::ChainEvent;
use preconf_chain::replica::{Applied, ApplyError, Follower, Kind, Publication, Publisher, StreamMark, POSITION_KEY};
use preconf_chain::wire::{self as codec, Message};
use preconf_chain::{ChainConfig, Node};

const STREAM: &str = "test";

/// A contract whose every call adds one to the caller's slot and logs: storage and logs.
const COUNTER_INIT: &str = "600d600c600039600d6000f3335460010133556000600060a000";

fn leader_config() -> ChainConfig {
    ChainConfig { preconf_interval_ms: 20, block_time_ms: 100, keep_change_sets: true, ..Default::default() }
}

fn replica_config(datadir: Option<std::path::PathBuf>) -> ChainConfig {
    ChainConfig { build: false, datadir, ..Default::default() }
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("preconf-replica-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

struct Pair {
    leader: Node,
    replica: Node,
    publisher: Publisher,
    events: Receiver<ChainEvent>,
    follower: Follower,
    /// A message each time the follower's committer landed a commit.
    landed: Receiver<()>,
    /// The stream: every publication handed out, numbered from 1.
    stream: Vec<Publication>,
}

impl Pair {
    fn new(leader: ChainConfig, replica: ChainConfig, capacity: usize) -> Self {
        let leader = Node::open(leader).expect("leader opens");
        let events = leader.chain().events().subscribe();
        let publisher = Publisher::new(leader.chain().clone(), 7, capacity);
        let replica = Node::open(replica).expect("replica opens");
        let (tx, landed) = mpsc::channel();
        let on_landed = move || {
            let _ = tx.send(());
        };
        let follower = Follower::new(replica.chain().clone(), replica.api().submit.clone(), STREAM.into(), on_landed)
            .expect("follower");
        Self { leader, replica, publisher, events, follower, landed, stream: Vec::new() }
    }

    /// Moves every event so far into the publisher.
    fn take_events(&mut self) {
        while let Ok(e) = self.events.try_recv() {
            self.publisher.on_event(e);
        }
    }

    /// Publishes what the publisher has and applies it; returns what each message did.
    fn pump(&mut self) -> Vec<Applied> {
        self.take_events();
        let mut out = Vec::new();
        while let Some(p) = self.publisher.next_publication().expect("publisher") {
            self.stream.push(p.clone());
            let seq = self.stream.len() as u64;
            let applied = self.follower.apply(seq, &p.data).expect("replica applies");
            // Right after applying, the replica shows what the message said.
            let view = self.replica.chain().view();
            match &applied {
                Applied::Pending { number, index } => {
                    let p = view.pending.as_ref().expect("a pending block");
                    assert_eq!((p.number(), p.preconf_index()), (*number, *index));
                }
                Applied::Sealed { number } => assert_eq!(view.head_number(), *number),
                _ => {}
            }
            out.push(applied);
        }
        out
    }

    /// Pumps until the replica's head reaches `number`.
    fn follow_to(&mut self, number: u64) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.replica.chain().view().head_number() < number {
            assert!(Instant::now() < deadline, "replica did not reach block {number}");
            self.pump();
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn send(&self, from: usize, to: Option<Address>, value: u64, input: &str) {
        let from = self.leader.api().submit.dev_accounts()[from].address;
        let req = TransactionRequest {
            from: Some(from),
            to: Some(to.map_or(TxKind::Create, TxKind::Call)),
            value: Some(U256::from(value)),
            input: alloy_rpc_types_eth::TransactionInput::new(Bytes::from(hex(input))),
            ..Default::default()
        };
        self.leader.api().submit.send_transaction(&req).expect("leader accepts");
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// Every sealed block up to `to` has the same hash and state root on both nodes.
fn assert_same_chain(leader: &Node, replica: &Node, to: u64) {
    let (l, r) = (leader.chain().view(), replica.chain().view());
    for n in 0..=to {
        assert_eq!(l.snapshot.block_hash(n).unwrap(), r.snapshot.block_hash(n).unwrap(), "hash of block {n}");
        let (lh, rh) = (l.snapshot.header(n).unwrap().unwrap(), r.snapshot.header(n).unwrap().unwrap());
        assert_eq!(lh, rh, "header of block {n}");
        assert_eq!(
            l.snapshot.receipts(n).unwrap().unwrap().receipts,
            r.snapshot.receipts(n).unwrap().unwrap().receipts
        );
    }
}

#[test]
fn replica_follows_every_preconfirmation_and_seal() {
    let mut pair = Pair::new(leader_config(), replica_config(None), 1024);
    pair.publisher.reset(None).unwrap();
    pair.send(0, None, 0, COUNTER_INIT);
    pair.follow_to(2);
    let contract = pair.leader.api().submit.dev_accounts()[0].address.create(0);
    let mut seen_pending = 0;
    for round in 0..20u64 {
        pair.send(1, Some(contract), 0, "");
        pair.send(2, Some(Address::repeat_byte(0x42)), round + 1, "");
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            pair.take_events();
            for applied in pair.pump() {
                if let Applied::Pending { .. } = applied {
                    seen_pending += 1;
                }
            }
            let (l, r) = (pair.leader.chain().view(), pair.replica.chain().view());
            if r.head_number() >= l.head_number() && r.head_number() > 2 + round {
                break;
            }
            assert!(Instant::now() < deadline, "replica lags");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    assert!(seen_pending > 20, "pre-confirmations applied: {seen_pending}");
    // Each seal's state root came from the trie its pre-confirmations had built.
    assert_eq!(pair.follower.recomputed_roots(), 0);
    let head = pair.replica.chain().view().head_number();
    assert_same_chain(&pair.leader, &pair.replica, head);
    // Storage written by the contract and balances agree at the replica's head.
    let (l, r) = (pair.leader.api(), pair.replica.api());
    let caller = pair.leader.api().submit.dev_accounts()[1].address;
    let slot = U256::from_be_slice(caller.as_slice());
    let at = preconf_chain::BlockId::Number(head);
    assert_eq!(l.state.storage(contract, slot, at).unwrap(), r.state.storage(contract, slot, at).unwrap());
    assert!(r.state.storage(contract, slot, at).unwrap() > U256::ZERO);
    assert_eq!(
        l.state.balance(Address::repeat_byte(0x42), at).unwrap(),
        r.state.balance(Address::repeat_byte(0x42), at).unwrap()
    );
}

#[test]
fn a_tampered_state_change_stops_the_replica() {
    let mut pair = Pair::new(leader_config(), replica_config(None), 1024);
    pair.publisher.reset(None).unwrap();
    pair.send(0, Some(Address::repeat_byte(0x41)), 5, "");
    // Wait for a sealed block holding the transfer.
    let deadline = Instant::now() + Duration::from_secs(5);
    let sealed = loop {
        pair.take_events();
        let p = pair.publisher.next_publication().unwrap();
        if let Some(p) = p {
            if p.kind == Kind::Sealed {
                if let Message::Sealed(b) = codec::decode(&p.data).unwrap() {
                    if !b.txs.is_empty() {
                        break *b;
                    }
                }
            }
            pair.stream.push(p.clone());
            pair.follower.apply(pair.stream.len() as u64, &p.data).unwrap();
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut tampered = sealed.clone();
    let recipient = tampered.changes.accounts.get_mut(&Address::repeat_byte(0x41)).unwrap();
    recipient.info.as_mut().unwrap().balance += U256::from(1);
    let data = codec::encode_sealed(
        &preconf_chain::types::BlockData {
            header: tampered.header.clone(),
            hash: Some(tampered.hash),
            txs: tampered.txs.clone().into(),
            ..Default::default()
        },
        &tampered.changes,
        None,
    );
    let seq = pair.stream.len() as u64 + 1;
    let err = pair.follower.apply(seq, &data).unwrap_err();
    let ApplyError::Stopped { reason, .. } = &err else { panic!("{err:?}") };
    assert!(reason.to_string().contains("state root mismatch"), "{reason}");
    assert!(pair.replica.chain().health().unwrap().contains("state root mismatch"));
    // It stays stopped, and its head did not move.
    assert_eq!(pair.replica.chain().view().head_number(), sealed.header.number - 1);
    assert!(matches!(pair.follower.apply(seq + 1, &data), Err(ApplyError::Stopped { .. })));
}

#[test]
fn a_gap_in_the_stream_is_refused_and_a_redelivery_ignored() {
    let mut pair = Pair::new(leader_config(), replica_config(None), 1024);
    pair.publisher.reset(None).unwrap();
    pair.send(0, Some(Address::repeat_byte(0x41)), 5, "");
    let deadline = Instant::now() + Duration::from_secs(5);
    while pair.stream.len() < 4 {
        pair.take_events();
        if let Some(p) = pair.publisher.next_publication().unwrap() {
            pair.stream.push(p);
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(2));
    }
    let s = pair.stream.clone();
    pair.follower.apply(1, &s[0].data).unwrap();
    match pair.follower.apply(3, &s[2].data) {
        Err(ApplyError::Gap { expected: 2, got: 3 }) => {}
        other => panic!("a gap must be refused, got {other:?}"),
    }
    assert_eq!(pair.follower.apply(1, &s[0].data).unwrap(), Applied::Duplicate);
    pair.follower.apply(2, &s[1].data).unwrap();
    pair.follower.apply(3, &s[2].data).unwrap();
    assert_eq!(pair.follower.last_seq(), 3);
}

#[test]
fn after_an_overflow_sealed_blocks_come_from_the_store_and_the_pending_block_as_a_snapshot() {
    // A queue of 3 events cannot hold what happens while nothing is published.
    let mut pair = Pair::new(leader_config(), replica_config(None), 3);
    for i in 0..5 {
        pair.send(i, Some(Address::repeat_byte(0x41)), 5, "");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while pair.leader.chain().view().head_number() < 6 {
        pair.take_events();
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
    pair.take_events();
    assert!(pair.publisher.stats().dropped > 0);
    pair.publisher.reset(None).unwrap();
    pair.follow_to(6);
    let stats = pair.publisher.stats();
    assert!(stats.republished >= 3, "{stats:?}");
    // The stream is a chain: sealed 1, 2, 3, ... each exactly once, in order.
    let sealed: Vec<u64> = pair.stream.iter().filter(|p| p.kind == Kind::Sealed).map(|p| p.number).collect();
    assert_eq!(sealed, (1..=sealed.len() as u64).collect::<Vec<_>>());
    let head = pair.replica.chain().view().head_number();
    assert_same_chain(&pair.leader, &pair.replica, head);
    // Pre-confirmations after the lost ones arrive as a snapshot, and the replica shows the
    // pending block again.
    let deadline = Instant::now() + Duration::from_secs(5);
    while pair.replica.chain().view().pending.is_none() {
        pair.pump();
        assert!(Instant::now() < deadline, "the replica's pending block does not come back");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_position_is_stored_with_the_block_and_resumed() {
    let dir = temp_dir("position");
    let last_sealed_seq;
    {
        let mut pair = Pair::new(leader_config(), replica_config(Some(dir.clone())), 1024);
        pair.publisher.reset(None).unwrap();
        pair.send(0, Some(Address::repeat_byte(0x41)), 5, "");
        pair.follow_to(3);
        last_sealed_seq = pair.stream.iter().rposition(|p| p.kind == Kind::Sealed).unwrap() as u64 + 1;
        // Pre-confirmations after the seal move the position in memory only.
        let head = pair.replica.chain().view().head_number();
        let mark = StreamMark { number: head, hash: pair.replica.chain().view().head_hash() };
        assert_eq!(mark.number, 3.max(head));
        pair.replica.shutdown();
    }
    let replica = Node::open(replica_config(Some(dir.clone()))).unwrap();
    let follower = Follower::new(replica.chain().clone(), replica.api().submit.clone(), STREAM.into(), || {}).unwrap();
    assert!(follower.position().unwrap() <= last_sealed_seq);
    let other =
        Follower::new(replica.chain().clone(), replica.api().submit.clone(), "another-stream".into(), || {}).unwrap();
    assert_eq!(other.position(), None, "a position in another stream does not count");
    drop(replica);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sealed_blocks_show_at_once_and_turn_safe_when_their_commit_lands() {
    let dir = temp_dir("committer");
    let mut pair = Pair::new(leader_config(), replica_config(Some(dir.clone())), 1024);
    pair.publisher.reset(None).unwrap();
    pair.send(0, Some(Address::repeat_byte(0x41)), 5, "");
    // `pump` checks that each sealed block is the replica's head right after it applied.
    pair.follow_to(3);
    let head = pair.replica.chain().view().head_number();
    // No message after the last one applied: the committer's word alone makes it durable.
    let deadline = Instant::now() + Duration::from_secs(10);
    // Safe at once: the stream holds it, and a leader that lost it reads it back from there.
    assert_eq!(pair.replica.chain().view().durable_head(), head);
    while !pair.replica.chain().view().snapshot.tips().is_empty() {
        assert!(Instant::now() < deadline, "block {head} never became durable");
        let _ = pair.landed.recv_timeout(Duration::from_millis(200));
        pair.follower.land().unwrap();
    }
    assert_eq!(pair.follower.in_flight(), 0);
    assert_eq!(pair.replica.chain().store().head().unwrap(), Some(head));
    // The position stored is the head's own message.
    let sealed_at = pair.stream.iter().rposition(|p| p.kind == Kind::Sealed && p.number == head).unwrap() as u64 + 1;
    let position = pair.replica.chain().store().meta(POSITION_KEY).unwrap().unwrap();
    assert_eq!(u64::from_be_bytes(position[..8].try_into().unwrap()), sealed_at);
    assert_same_chain(&pair.leader, &pair.replica, head);
    drop(pair);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_publisher_refuses_a_stream_of_another_chain_or_ahead_of_it() {
    let pair = Pair::new(leader_config(), replica_config(None), 8);
    let mut publisher = Publisher::new(pair.leader.chain().clone(), 1, 8);
    let head = pair.leader.chain().view().head_number();
    assert!(publisher.reset(Some(StreamMark { number: head + 5, hash: Default::default() })).is_err());
    assert!(publisher.reset(Some(StreamMark { number: 0, hash: Default::default() })).is_err());
    let genesis = pair.leader.chain().view().snapshot.block_hash(0).unwrap().unwrap();
    publisher.reset(Some(StreamMark { number: 0, hash: genesis })).unwrap();
    let _ = Arc::clone(pair.leader.chain());
}

#[test]
fn an_op_chain_replica_follows_blocks_that_open_with_a_deposit() {
    let op = |c: ChainConfig| ChainConfig { optimism: true, ..c };
    let mut pair = Pair::new(op(leader_config()), op(replica_config(None)), 1024);
    pair.publisher.reset(None).unwrap();
    pair.send(0, None, 0, COUNTER_INIT);
    pair.send(1, Some(Address::repeat_byte(0x42)), 7, "");
    pair.follow_to(3);
    assert_same_chain(&pair.leader, &pair.replica, 3);
    // Block 1's L1-info deposit is its depositor's first: its receipt records nonce 0,
    // on the leader and on the replica (a trailing RLP 0 once read back as no nonce).
    for node in [&pair.leader, &pair.replica] {
        for n in 1..=3u64 {
            let receipts = node.chain().view().snapshot.receipts(n).unwrap().unwrap().receipts;
            let deposit = preconf_op::receipt::decode_2718(&receipts[0]).unwrap();
            assert_eq!(deposit.deposit_nonce, Some(n - 1), "block {n}");
        }
    }
}

#[test]
fn a_rewind_message_reads_back_and_names_the_head_it_leaves() {
    use alloy_primitives::B256;
    use preconf_chain::wire::RewoundTo;
    let to = RewoundTo { number: 41, hash: B256::repeat_byte(7) };
    let data = codec::encode_rewound(to);
    let env = codec::peek(&data).unwrap();
    assert_eq!((env.kind, env.number, env.index), (Kind::Rewound, 41, 0));
    assert!(matches!(codec::decode(&data).unwrap(), Message::Rewound(got) if got == to));
    assert_eq!(codec::peek_head(&data).unwrap(), Some(to));
    let mut trailing = data.clone();
    trailing.push(0);
    assert!(codec::decode(&trailing).is_err());
    // A sealed block's message names its own head; a term names none.
    let term = preconf_chain::wire::TermStart { term: 1, node: "a".into(), url: "u".into(), unix_ms: 0 };
    assert_eq!(codec::peek_head(&codec::encode_term(3, 0, &term)).unwrap(), None);
}

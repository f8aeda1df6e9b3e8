//! Flashblocks a real node publishes, read back: an OP dev chain node builds blocks with
//! transfers while its events are rendered as the endpoint renders them (stream and state
//! roots, as crates/napi's renderer does); the decoder puts each block's messages back
//! together into exactly the block the node sealed: its transactions, header and hash.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use alloy_primitives::{Address, Bytes, TxKind, U256};
use alloy_rpc_types_eth::TransactionRequest;
use preconf_chain::events::ChainEvent;
use preconf_chain::{ChainConfig, Node};
use preconf_flashblocks::{decode, HeaderShape, Sequence};
use preconf_rpc::render::flashblocks::{standalone_payload_id, FlashblockStream, FlashblocksV1, PreconfRoots};

#[test]
fn the_blocks_put_together_from_the_published_flashblocks_are_the_sealed_blocks() {
    let config = ChainConfig { optimism: true, preconf_interval_ms: 20, block_time_ms: 200, ..Default::default() };
    let node = Node::open(config).expect("node opens");
    let events = node.chain().events().subscribe();
    let (mut stream, mut roots) = (FlashblockStream::default(), PreconfRoots::new(node.chain().clone()));
    let mut messages: HashMap<u64, Vec<String>> = HashMap::new();
    let accounts: Vec<Address> = node.api().submit.dev_accounts().iter().map(|a| a.address).collect();
    let mut sent = 0u64;
    let mut last_sent = Instant::now();
    let mut checked = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while checked < 3 {
        assert!(Instant::now() < deadline, "three blocks with transfers in a minute");
        // A transfer every 30 ms (the blocks are 200 ms), so blocks have several
        // pre-confirmations with transactions.
        if sent < 40 && last_sent.elapsed() >= Duration::from_millis(30) {
            last_sent = Instant::now();
            let req = TransactionRequest {
                from: Some(accounts[(sent % 3) as usize]),
                to: Some(TxKind::Call(Address::repeat_byte(0xbe))),
                value: Some(U256::from(sent + 1)),
                ..Default::default()
            };
            node.api().submit.send_transaction(&req).expect("accepted");
            sent += 1;
        }
        while let Ok(event) = events.recv_timeout(Duration::from_millis(5)) {
            match event {
                ChainEvent::Opened { block, changes, .. } => {
                    let root = roots.opened(&block, &changes);
                    assert!(root.is_some(), "the parent's trie is readable");
                    let text = stream.opened(&block, &changes, root, roots.jovian(&block));
                    messages.entry(block.header.number).or_default().push(text);
                }
                ChainEvent::Preconfirmed { block, changes, .. } => {
                    let root = roots.apply(&block, &changes);
                    if let Some(text) = stream.preconfirmed(&block, &changes, root) {
                        messages.entry(block.header.number).or_default().push(text);
                    }
                }
                ChainEvent::Sealed { block, .. } => {
                    let Some(texts) = messages.remove(&block.header.number) else { continue };
                    let mut frames = texts.iter().map(|t| decode(t.as_bytes()).expect("decodes"));
                    let mut sequence = Sequence::start(frames.next().unwrap()).expect("index 0 first");
                    for f in frames {
                        assert!(sequence.push(f).expect("in order"));
                    }
                    let encodings: Vec<Bytes> = block.txs.iter().map(|t| t.tx.encoded_2718().into()).collect();
                    assert_eq!(sequence.transactions, encodings, "block {}", block.header.number);
                    // The OP dev chain runs Isthmus: its headers carry the empty requests hash.
                    let shape = HeaderShape { canyon: true, ecotone: true, isthmus: true };
                    assert_eq!(sequence.header(shape), block.header, "block {}", block.header.number);
                    assert_eq!(sequence.block_hash(), block.hash);
                    if block.txs.len() > 1 {
                        checked += 1; // more than the L1-info deposit
                    }
                }
                _ => {}
            }
        }
    }
    node.shutdown();
}

/// Joining mid-block (an endpoint started late, a replica taking up the stream, a new
/// leader continuing a block): the block being built is published over from where the node
/// shows it, as a new payload of that block at index 0, and its messages still put together
/// the sealed block.
#[test]
fn a_renderer_that_joins_mid_block_publishes_that_block_from_index_0() {
    let config = ChainConfig { optimism: true, preconf_interval_ms: 20, block_time_ms: 300, ..Default::default() };
    let node = Node::open(config).expect("node opens");
    let events = node.chain().events().subscribe();
    let mut v1 = FlashblocksV1::new(node.chain().clone());
    let accounts: Vec<Address> = node.api().submit.dev_accounts().iter().map(|a| a.address).collect();
    let mut messages: HashMap<u64, Vec<String>> = HashMap::new();
    let (mut joined, mut checked, mut sent) = (None, 0, 0u64);
    let deadline = Instant::now() + Duration::from_secs(60);
    while checked < 2 {
        assert!(Instant::now() < deadline, "two blocks checked in a minute");
        if sent < 30 {
            let req = TransactionRequest {
                from: Some(accounts[(sent % 3) as usize]),
                to: Some(TxKind::Call(Address::repeat_byte(0xbe))),
                value: Some(U256::from(sent + 1)),
                ..Default::default()
            };
            node.api().submit.send_transaction(&req).expect("accepted");
            sent += 1;
        }
        while let Ok(event) = events.recv_timeout(Duration::from_millis(15)) {
            match event {
                // Until it joins, the renderer hears nothing: it joins at a pre-confirmation
                // past the second of a block with transactions.
                ChainEvent::Preconfirmed { block, changes, .. }
                    if joined.is_some() || (block.preconf_index >= Some(2) && block.txs.len() > 1) =>
                {
                    joined.get_or_insert(block.header.number);
                    if let Some(text) = v1.preconfirmed(&block, &changes, true) {
                        messages.entry(block.header.number).or_default().push(text);
                    }
                }
                ChainEvent::Opened { block, changes, .. } if joined.is_some() => {
                    let text = v1.opened(&block, &changes, true);
                    messages.entry(block.header.number).or_default().push(text);
                }
                ChainEvent::Sealed { block, .. } => {
                    let texts = messages.remove(&block.header.number);
                    if joined == Some(block.header.number) {
                        assert!(texts.is_some(), "the block joined mid-way is published");
                    }
                    let Some(texts) = texts else { continue };
                    let mut frames = texts.iter().map(|t| decode(t.as_bytes()).expect("decodes"));
                    let first = frames.next().unwrap();
                    if Some(block.header.number) == joined {
                        // A new payload of the block, its index 0 everything up to where it joined.
                        assert_ne!(first.payload_id, standalone_payload_id(&block.header));
                        assert!(first.diff.transactions.len() > 1);
                    }
                    let mut sequence = Sequence::start(first).expect("index 0 first");
                    for f in frames {
                        assert!(sequence.push(f).expect("in order"));
                    }
                    let encodings: Vec<Bytes> = block.txs.iter().map(|t| t.tx.encoded_2718().into()).collect();
                    assert_eq!(sequence.transactions, encodings, "block {}", block.header.number);
                    // The OP dev chain runs Isthmus: its headers carry the empty requests hash.
                    let shape = HeaderShape { canyon: true, ecotone: true, isthmus: true };
                    assert_eq!(sequence.header(shape), block.header, "block {}", block.header.number);
                    assert_eq!(sequence.block_hash(), block.hash);
                    checked += 1;
                }
                _ => {}
            }
        }
    }
    node.shutdown();
}

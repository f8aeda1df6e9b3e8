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
use preconf_rpc::render::flashblocks::{FlashblockStream, PreconfRoots};

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
                    let shape = HeaderShape { canyon: true, ecotone: true, isthmus: false };
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

//! Isthmus's header: `withdrawalsRoot` is the L2ToL1MessagePasser's storage root after the
//! block (insertions and deletions applied), `requestsHash` the empty requests' hash. No
//! real Isthmus block with its witness is in the fixtures, so the block is constructed: the
//! passer holds a small store-what-you-are-told contract and two slots from genesis, the
//! block writes one slot and clears another, and the expected root is computed apart from
//! the node's trie (alloy-trie's hash builder over the storage the passer must end with).

use alloy_eips::eip7685::EMPTY_REQUESTS_HASH;
use alloy_primitives::{Bytes, B256, U256};
use alloy_signer_local::PrivateKeySigner;
use alloy_trie::root::storage_root_unhashed;
use preconf_op::block::{OpBlockBuilder, L2_TO_L1_MESSAGE_PASSER};
use preconf_op::dev::{dev_config, DevL1Values};
use preconf_op::{OpSpecId, OpTx};

use crate::support::{attributes, call, dev_genesis, ETH};

/// SSTORE(calldata[0..32], calldata[32..64]): the test's own stand-in for the passer's code.
const STORE: &str = "0x602035600035550000";

fn slot(n: u64) -> String {
    format!("{:#066x}", n)
}

fn word(n: u64) -> B256 {
    B256::from(U256::from(n))
}

#[test]
fn withdrawals_root_is_the_message_passers_storage_root() {
    let signer = PrivateKeySigner::random();
    let (_, state, parent) = dev_genesis(serde_json::json!({
        signer.address().to_string(): { "balance": format!("{:#x}", 10 * ETH) },
        L2_TO_L1_MESSAGE_PASSER.to_string(): {
            "balance": "0x0", "code": STORE,
            "storage": { slot(1): slot(5), slot(2): slot(7) },
        },
    }));
    let mut config = dev_config(901);
    config.forks.isthmus_time = Some(0);

    // A block that leaves the passer alone has its genesis storage root.
    let mut block = OpBlockBuilder::open(&config, &parent, &attributes(2), &state).unwrap();
    assert_eq!(block.spec(), OpSpecId::ISTHMUS);
    block.push(OpTx::Deposit(DevL1Values::default().l1_info_deposit(0))).unwrap();
    let untouched = block.finish().unwrap().header;
    let genesis_root = storage_root_unhashed([(word(1), U256::from(5)), (word(2), U256::from(7))]);
    assert_eq!(untouched.withdrawals_root, Some(genesis_root));
    assert_eq!(untouched.requests_hash, Some(EMPTY_REQUESTS_HASH));

    // Slot 3 written, slot 1 cleared: the root is the one of {2: 7, 3: 9}.
    let mut block = OpBlockBuilder::open(&config, &parent, &attributes(2), &state).unwrap();
    block.push(OpTx::Deposit(DevL1Values::default().l1_info_deposit(0))).unwrap();
    let base_fee = block.base_fee();
    for (nonce, (key, value)) in [(3u64, 9u64), (1, 0)].into_iter().enumerate() {
        let input = Bytes::from([word(key).as_slice(), word(value).as_slice()].concat());
        let executed = block.push(call(&signer, nonce as u64, L2_TO_L1_MESSAGE_PASSER, input, base_fee)).unwrap();
        assert!(executed.success);
    }
    let header = block.finish().unwrap().header;
    let expected = storage_root_unhashed([(word(2), U256::from(7)), (word(3), U256::from(9))]);
    assert_eq!(header.withdrawals_root, Some(expected));
    assert_ne!(expected, genesis_root);
    assert_eq!(header.requests_hash, Some(EMPTY_REQUESTS_HASH));

    // Before Isthmus (Canyon on) the field is the empty trie's root whatever the passer holds.
    let mut holocene = dev_config(901);
    holocene.forks.isthmus_time = None;
    let mut block = OpBlockBuilder::open(&holocene, &parent, &attributes(2), &state).unwrap();
    block.push(OpTx::Deposit(DevL1Values::default().l1_info_deposit(0))).unwrap();
    let header = block.finish().unwrap().header;
    assert_eq!(header.withdrawals_root, Some(alloy_trie::EMPTY_ROOT_HASH));
    assert_eq!(header.requests_hash, None);
}

//! A block whose header disagrees with its execution stops the import at that block,
//! naming the field; everything before it stays committed.

use alloy_consensus::{proofs, Block, TxEnvelope};
use alloy_primitives::{Bloom, B256};
use preconf_chain::consensus::Field;
use preconf_chain::import::{ImportError, TxFault};
use preconf_chain::InvalidTx;

use super::{kit, support};

/// Imports the chain with block `number` changed by `tamper`; returns the error.
fn import_tampered(number: u64, tamper: impl FnOnce(&mut Block<TxEnvelope>)) -> ImportError {
    let dir = support::TempDir::new("tampered");
    let (store, genesis) = support::open(&dir);
    let mut blocks = kit::blocks();
    tamper(&mut blocks[number as usize - 1]);
    let e = support::import(&store, &genesis, support::as_file(blocks)).0.unwrap_err();
    assert_eq!(e.block_number(), Some(number), "{e}");
    assert_eq!(store.head().unwrap(), Some(number - 1), "blocks before {number} are committed, {number} is not");
    e
}

fn field(e: &ImportError) -> Field {
    e.field().unwrap_or_else(|| panic!("a header field is named: {e}"))
}

#[test]
fn execution_results_must_match_the_header() {
    let e = import_tampered(20, |b| b.header.state_root = B256::repeat_byte(1));
    assert_eq!(field(&e), Field::StateRoot);
    let msg = e.to_string();
    let header = "0x0101010101010101010101010101010101010101010101010101010101010101";
    assert!(msg.starts_with(&format!("block 20: invalid stateRoot: header has {header}, execution gives 0x")), "{msg}");
    // Before Byzantium the receipts hold state roots: the receipts root covers them.
    assert_eq!(field(&import_tampered(5, |b| b.header.receipts_root = B256::ZERO)), Field::ReceiptsRoot);
    assert_eq!(field(&import_tampered(30, |b| b.header.receipts_root = B256::ZERO)), Field::ReceiptsRoot);
    assert_eq!(field(&import_tampered(2, |b| b.header.gas_used -= 1)), Field::GasUsed);
    assert_eq!(field(&import_tampered(27, |b| b.header.logs_bloom = Bloom::ZERO)), Field::LogsBloom);
    let empty = alloy_eips::eip7685::EMPTY_REQUESTS_HASH;
    assert_eq!(field(&import_tampered(45, |b| b.header.requests_hash = Some(empty))), Field::RequestsHash);
}

#[test]
fn body_and_header_rules_run_before_execution() {
    assert_eq!(field(&import_tampered(2, |b| b.body.transactions.swap(0, 1))), Field::TransactionsRoot);
    assert_eq!(field(&import_tampered(31, |b| b.header.base_fee_per_gas = Some(7))), Field::BaseFee);
    assert_eq!(field(&import_tampered(10, |b| b.body.ommers.clear())), Field::OmmersHash);
}

#[test]
fn withdrawals_and_rewards_are_part_of_the_state() {
    // A withdrawal of one more gwei, its root recomputed: only the state root can tell.
    let e = import_tampered(39, |b| {
        let withdrawals = b.body.withdrawals.as_mut().unwrap();
        withdrawals[0].amount += 1;
        b.header.withdrawals_root = Some(proofs::calculate_withdrawals_root(withdrawals));
    });
    assert_eq!(field(&e), Field::StateRoot);
    // An uncle paid to someone else, the uncle hash recomputed: the reward moves.
    let e = import_tampered(10, |b| {
        b.body.ommers[0].beneficiary = alloy_primitives::Address::repeat_byte(0x77);
        b.header.ommers_hash = proofs::calculate_ommers_root(&b.body.ommers);
    });
    assert_eq!(field(&e), Field::StateRoot);
}

#[test]
fn a_transaction_that_cannot_execute_names_its_index() {
    // Block 2's first two transactions come from one sender: swapped, the first has a nonce
    // too high (roots recomputed, so only execution can tell).
    let e = import_tampered(2, |b| {
        b.body.transactions.swap(0, 1);
        b.header.transactions_root = proofs::calculate_transaction_root(&b.body.transactions);
    });
    match &e {
        ImportError::Transaction { number: 2, index: 0, reason, .. } => {
            assert!(matches!(reason, TxFault::Invalid(e) if matches!(**e, InvalidTx::NonceTooHigh { .. })), "{reason}")
        }
        other => panic!("expected a transaction error, got {other}"),
    }
}

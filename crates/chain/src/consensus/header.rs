//! Header rules: what a block must carry given its parent and its own body, and, after
//! execution, what it must agree with. Each check returns the first failure as a
//! [`ConsensusError`] naming the block, the field, the expected value and the block's.

use alloy_consensus::{constants::EMPTY_OMMER_ROOT_HASH, proofs, Block, Header, TxEnvelope};
use alloy_primitives::{Bloom, B256, B64, U256};

use super::base_fee::{gas_limit_bounds, next_base_fee};
use super::blob::{blob_gas_used, next_excess_blob_gas};
use super::difficulty::{ethash_difficulty, expects_proof_of_stake};
use super::error::{show, ConsensusError, Field};
use crate::spec::ChainSpec;

/// geth's `MaximumExtraDataSize`.
pub const MAX_EXTRA_DATA: usize = 32;
/// A block may include at most two uncles, each at most seven generations older.
pub const MAX_OMMERS: usize = 2;
pub const MAX_OMMER_DEPTH: u64 = 7;
/// EIP-7934 (Osaka): a block's RLP encoding may not exceed 10 MiB minus a 2 MiB margin.
pub const MAX_RLP_BLOCK_SIZE: usize = 10_485_760 - 2_097_152;

/// What the checks need to know about the parent.
#[derive(Clone, Copy, Debug)]
pub struct Parent<'a> {
    pub header: &'a Header,
    pub hash: B256,
    /// Total difficulty up to and including the parent.
    pub total_difficulty: U256,
}

/// What executing the block produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executed {
    pub state_root: B256,
    pub receipts_root: B256,
    pub logs_bloom: Bloom,
    pub gas_used: u64,
    /// EIP-7685 requests hash; `None` before Prague.
    pub requests_hash: Option<B256>,
}

fn expect<T: PartialEq + std::fmt::Display>(
    number: u64,
    field: Field,
    expected: T,
    got: T,
) -> Result<(), ConsensusError> {
    if expected == got {
        Ok(())
    } else {
        Err(ConsensusError::new(number, field, expected, got))
    }
}

fn expect_opt<T: PartialEq + std::fmt::Display>(
    number: u64,
    field: Field,
    expected: Option<T>,
    got: Option<T>,
) -> Result<(), ConsensusError> {
    if expected == got {
        Ok(())
    } else {
        Err(ConsensusError::new(number, field, show(expected), show(got)))
    }
}

/// A field that a fork introduces: present from the fork on, absent before it.
fn expect_presence<T: std::fmt::Display>(
    number: u64,
    field: Field,
    active: bool,
    got: Option<T>,
) -> Result<(), ConsensusError> {
    match (active, got) {
        (true, None) => Err(ConsensusError::new(number, field, "present", "absent")),
        (false, Some(v)) => Err(ConsensusError::new(number, field, "absent", v)),
        _ => Ok(()),
    }
}

/// Every rule that follows from the header and its parent alone: hash chain, number,
/// time, extra data, gas limit and gas used bounds, proof of work or stake (difficulty,
/// nonce, uncles), base fee, excess blob gas, and which fork fields are present.
/// Seals (ethash nonce and mix hash) are not checked.
pub fn check_header(spec: &ChainSpec, parent: &Parent<'_>, header: &Header) -> Result<(), ConsensusError> {
    let n = header.number;
    let p = parent.header;
    expect(n, Field::ParentHash, parent.hash, header.parent_hash)?;
    expect(n, Field::Number, p.number + 1, n)?;
    if header.timestamp <= p.timestamp {
        return Err(ConsensusError::new(n, Field::Timestamp, format!("after {}", p.timestamp), header.timestamp));
    }
    if header.extra_data.len() > MAX_EXTRA_DATA {
        let got = format!("{} bytes", header.extra_data.len());
        return Err(ConsensusError::new(n, Field::ExtraData, format!("at most {MAX_EXTRA_DATA} bytes"), got));
    }
    let (low, high) = gas_limit_bounds(spec, p, n);
    if !(low..=high).contains(&header.gas_limit) {
        return Err(ConsensusError::new(n, Field::GasLimit, format!("{low}..={high}"), header.gas_limit));
    }
    if header.gas_used > header.gas_limit {
        return Err(ConsensusError::new(n, Field::GasUsed, format!("at most {}", header.gas_limit), header.gas_used));
    }
    if expects_proof_of_stake(spec, parent.total_difficulty) {
        expect(n, Field::Difficulty, U256::ZERO, header.difficulty)?;
        expect(n, Field::Nonce, B64::ZERO, header.nonce)?;
        expect(n, Field::OmmersHash, EMPTY_OMMER_ROOT_HASH, header.ommers_hash)?;
    } else {
        expect(n, Field::Difficulty, ethash_difficulty(spec, header.timestamp, p), header.difficulty)?;
    }
    expect_opt(n, Field::BaseFee, next_base_fee(spec, p, n), header.base_fee_per_gas)?;
    let t = header.timestamp;
    expect_presence(n, Field::WithdrawalsRoot, spec.is_shanghai(t), header.withdrawals_root)?;
    expect_presence(n, Field::BlobGasUsed, spec.is_cancun(t), header.blob_gas_used)?;
    expect_opt(n, Field::ExcessBlobGas, next_excess_blob_gas(spec, p, t), header.excess_blob_gas)?;
    expect_presence(n, Field::ParentBeaconBlockRoot, spec.is_cancun(t), header.parent_beacon_block_root)?;
    expect_presence(n, Field::RequestsHash, spec.is_prague(t), header.requests_hash)?;
    // Amsterdam's fields: the importer does not implement that fork yet.
    expect_presence(n, Field::BlockAccessListHash, false, header.block_access_list_hash)?;
    expect_presence(n, Field::SlotNumber, false, header.slot_number)?;
    Ok(())
}

/// The rules between the header and the body: encoded size (Osaka), transactions root,
/// uncles (hash, count, depth), withdrawals (root, presence) and blob gas used (sum and
/// per-block maximum).
pub fn check_body(spec: &ChainSpec, block: &Block<TxEnvelope>) -> Result<(), ConsensusError> {
    let header = &block.header;
    let body = &block.body;
    let n = header.number;
    if spec.is_osaka(header.timestamp) {
        let size = alloy_rlp::Encodable::length(block);
        if size > MAX_RLP_BLOCK_SIZE {
            return Err(ConsensusError::new(n, Field::Size, format!("at most {MAX_RLP_BLOCK_SIZE} bytes"), size));
        }
    }
    expect(
        n,
        Field::TransactionsRoot,
        proofs::calculate_transaction_root(&body.transactions),
        header.transactions_root,
    )?;
    expect(n, Field::OmmersHash, proofs::calculate_ommers_root(&body.ommers), header.ommers_hash)?;
    if body.ommers.len() > MAX_OMMERS {
        let got = format!("{} uncles", body.ommers.len());
        return Err(ConsensusError::new(n, Field::Ommers, format!("at most {MAX_OMMERS} uncles"), got));
    }
    for uncle in &body.ommers {
        if uncle.number >= n || n - uncle.number > MAX_OMMER_DEPTH {
            let expected = format!("an uncle numbered {}..={}", n.saturating_sub(MAX_OMMER_DEPTH), n.saturating_sub(1));
            return Err(ConsensusError::new(n, Field::Ommers, expected, format!("uncle number {}", uncle.number)));
        }
    }
    let withdrawals_root = body.withdrawals.as_ref().map(|w| proofs::calculate_withdrawals_root(w));
    expect_presence(n, Field::WithdrawalsRoot, header.withdrawals_root.is_some(), withdrawals_root)?;
    expect_opt(n, Field::WithdrawalsRoot, withdrawals_root, header.withdrawals_root)?;
    let used = blob_gas_used(&body.transactions);
    match (spec.blob_params_at(header.timestamp), header.blob_gas_used) {
        (Some(params), Some(got)) => {
            expect(n, Field::BlobGasUsed, used, got)?;
            let max = params.max_blob_gas_per_block();
            if used > max {
                return Err(ConsensusError::new(n, Field::BlobGasUsed, format!("at most {max}"), used));
            }
        }
        // Blob transactions before Cancun: no header field to carry them.
        (None, None) if used > 0 => {
            return Err(ConsensusError::new(n, Field::BlobGasUsed, "no blobs before Cancun", used))
        }
        _ => {}
    }
    Ok(())
}

/// After execution: the header must agree with what the block did.
pub fn check_executed(header: &Header, executed: &Executed) -> Result<(), ConsensusError> {
    let n = header.number;
    expect(n, Field::GasUsed, executed.gas_used, header.gas_used)?;
    expect(n, Field::ReceiptsRoot, executed.receipts_root, header.receipts_root)?;
    expect(n, Field::LogsBloom, executed.logs_bloom, header.logs_bloom)?;
    expect_opt(n, Field::RequestsHash, executed.requests_hash, header.requests_hash)?;
    expect(n, Field::StateRoot, executed.state_root, header.state_root)?;
    Ok(())
}

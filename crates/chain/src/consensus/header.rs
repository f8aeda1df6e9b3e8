//! Header rules: what a block must carry given its parent and its own body, and, after
//! execution, what it must agree with. Each check returns the first failure as a
//! [`ConsensusError`] naming the block, the field, the block's value and what the rules,
//! the body or execution give.

use alloy_consensus::{constants::EMPTY_OMMER_ROOT_HASH, proofs, Block, Header, TxEip4844Variant, TxEnvelope};
use alloy_primitives::{Bloom, B256, B64, U256};

use super::base_fee::{gas_limit_bounds, next_base_fee};
use super::blob::{blob_gas_used, next_excess_blob_gas};
use super::dao::check_dao_extra_data;
use super::difficulty::{ethash_difficulty, expects_proof_of_stake};
use super::error::{Basis, ConsensusError, Field, Found, Rule, Subject};
use crate::spec::ChainSpec;

/// A block may include at most two uncles (which ones is `super::uncles`).
pub const MAX_OMMERS: usize = 2;

/// geth's `MaximumExtraDataSize`.
pub const MAX_EXTRA_DATA: usize = 32;
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

/// The header (or an uncle, `subject`) of block `number` must carry `required`.
struct Check {
    number: u64,
    subject: Subject,
}

impl Check {
    fn fail(&self, field: Field, basis: Basis, required: Rule, found: Found) -> ConsensusError {
        ConsensusError::with(self.number, field, self.subject, found, basis, required)
    }

    fn equal<T: PartialEq + std::fmt::Display>(
        &self,
        field: Field,
        basis: Basis,
        required: T,
        found: T,
    ) -> Result<(), ConsensusError> {
        if required == found {
            Ok(())
        } else {
            Err(self.fail(field, basis, Rule::value(required), Found::value(found)))
        }
    }

    fn equal_opt<T: PartialEq + std::fmt::Display>(
        &self,
        field: Field,
        basis: Basis,
        required: Option<T>,
        found: Option<T>,
    ) -> Result<(), ConsensusError> {
        if required == found {
            Ok(())
        } else {
            Err(self.fail(field, basis, Rule::show(required), Found::show(found)))
        }
    }

    /// A field that a fork introduces: present from the fork on, absent before it.
    fn presence<T: std::fmt::Display>(
        &self,
        field: Field,
        active: bool,
        found: Option<T>,
    ) -> Result<(), ConsensusError> {
        match (active, found) {
            (true, None) => Err(self.fail(field, Basis::Rules, Rule::Present, Found::Absent)),
            (false, Some(v)) => Err(self.fail(field, Basis::Rules, Rule::Absent, Found::value(v))),
            _ => Ok(()),
        }
    }

    /// The rules a header and an uncle share, given its parent: number, time, extra data
    /// (DAO fork range included), gas limit and gas used bounds, base fee.
    fn common(&self, spec: &ChainSpec, p: &Header, header: &Header) -> Result<(), ConsensusError> {
        self.equal(Field::Number, Basis::Rules, p.number + 1, header.number)?;
        if header.timestamp <= p.timestamp {
            let found = Found::value(header.timestamp);
            return Err(self.fail(Field::Timestamp, Basis::Rules, Rule::After(p.timestamp), found));
        }
        if header.extra_data.len() > MAX_EXTRA_DATA {
            let found = Found::Bytes(header.extra_data.len());
            return Err(self.fail(Field::ExtraData, Basis::Rules, Rule::AtMostBytes(MAX_EXTRA_DATA), found));
        }
        check_dao_extra_data(spec, header).map_err(|e| ConsensusError {
            number: self.number,
            subject: self.subject,
            ..e
        })?;
        let (low, high) = gas_limit_bounds(spec, p, header.number);
        if !(low..=high).contains(&header.gas_limit) {
            let found = Found::value(header.gas_limit);
            return Err(self.fail(Field::GasLimit, Basis::Rules, Rule::Within { low, high }, found));
        }
        if header.gas_used > header.gas_limit {
            let required = Rule::AtMostGasLimit(header.gas_limit);
            return Err(self.fail(Field::GasUsed, Basis::Rules, required, Found::value(header.gas_used)));
        }
        self.equal_opt(
            Field::BaseFee,
            Basis::Rules,
            next_base_fee(spec, p, header.number, header.timestamp),
            header.base_fee_per_gas,
        )
    }
}

/// Every rule that follows from the header and its parent alone: hash chain, number,
/// time, extra data, gas limit and gas used bounds, proof of work or stake (difficulty,
/// nonce, uncles), base fee, excess blob gas, and which fork fields are present.
/// Seals (ethash nonce and mix hash) are not checked.
pub fn check_header(spec: &ChainSpec, parent: &Parent<'_>, header: &Header) -> Result<(), ConsensusError> {
    let n = header.number;
    let p = parent.header;
    let c = Check { number: n, subject: Subject::Header };
    c.equal(Field::ParentHash, Basis::Rules, parent.hash, header.parent_hash)?;
    c.common(spec, p, header)?;
    if expects_proof_of_stake(spec, parent.total_difficulty) {
        c.equal(Field::Difficulty, Basis::Rules, U256::ZERO, header.difficulty)?;
        c.equal(Field::Nonce, Basis::Rules, B64::ZERO, header.nonce)?;
        c.equal(Field::OmmersHash, Basis::Rules, EMPTY_OMMER_ROOT_HASH, header.ommers_hash)?;
    } else {
        c.equal(Field::Difficulty, Basis::Rules, ethash_difficulty(spec, header.timestamp, p), header.difficulty)?;
    }
    let t = header.timestamp;
    c.presence(Field::WithdrawalsRoot, spec.is_shanghai(t), header.withdrawals_root)?;
    c.presence(Field::BlobGasUsed, spec.is_cancun(t), header.blob_gas_used)?;
    c.equal_opt(Field::ExcessBlobGas, Basis::Rules, next_excess_blob_gas(spec, p, t), header.excess_blob_gas)?;
    c.presence(Field::ParentBeaconBlockRoot, spec.is_cancun(t), header.parent_beacon_block_root)?;
    c.presence(Field::RequestsHash, spec.is_prague(t), header.requests_hash)?;
    // Amsterdam's fields: the importer does not implement that fork yet.
    c.presence(Field::BlockAccessListHash, false, header.block_access_list_hash)?;
    c.presence(Field::SlotNumber, false, header.slot_number)?;
    Ok(())
}

/// An uncle of block `number` on its parent (found among the block's ancestors): the
/// rules of a proof-of-work header, seal aside.
pub fn check_uncle_header(
    spec: &ChainSpec,
    parent: &Header,
    uncle: &Header,
    number: u64,
    subject: Subject,
) -> Result<(), ConsensusError> {
    let c = Check { number, subject };
    c.common(spec, parent, uncle)?;
    c.equal(Field::Difficulty, Basis::Rules, ethash_difficulty(spec, uncle.timestamp, parent), uncle.difficulty)
}

/// The rules between the header and the body that need no other block: encoded size
/// (Osaka), transactions in their canonical form and their root, the uncles' hash,
/// withdrawals (root, presence) and blob gas used (sum and per-block maximum). The
/// uncles themselves need the ancestors: [`super::uncles::check_uncles`].
pub fn check_body(spec: &ChainSpec, block: &Block<TxEnvelope>) -> Result<(), ConsensusError> {
    let header = &block.header;
    let body = &block.body;
    let n = header.number;
    let c = Check { number: n, subject: Subject::Header };
    if spec.is_osaka(header.timestamp) {
        let size = alloy_rlp::Encodable::length(block);
        if size > MAX_RLP_BLOCK_SIZE {
            let required = Rule::AtMostBytes(MAX_RLP_BLOCK_SIZE);
            return Err(ConsensusError::with(
                n,
                Field::Size,
                Subject::Block,
                Found::value(size),
                Basis::Rules,
                required,
            ));
        }
    }
    // A blob transaction with its sidecar (blobs, commitments, proofs) is the network form
    // for the pool; a block holds only the canonical form.
    for (i, tx) in body.transactions.iter().enumerate() {
        if let TxEnvelope::Eip4844(signed) = tx {
            if matches!(signed.tx(), TxEip4844Variant::TxEip4844WithSidecar(_)) {
                let (subject, found, required) = (Subject::Transaction(i), Found::BlobSidecar, Rule::CanonicalForm);
                return Err(ConsensusError::with(n, Field::Transactions, subject, found, Basis::Rules, required));
            }
        }
    }
    c.equal(
        Field::TransactionsRoot,
        Basis::Body,
        proofs::calculate_transaction_root(&body.transactions),
        header.transactions_root,
    )?;
    c.equal(Field::OmmersHash, Basis::Body, proofs::calculate_ommers_root(&body.ommers), header.ommers_hash)?;
    if body.ommers.len() > MAX_OMMERS {
        let (found, required) = (Found::Uncles(body.ommers.len()), Rule::AtMost(MAX_OMMERS as u64));
        return Err(ConsensusError::with(n, Field::Ommers, Subject::Block, found, Basis::Rules, required));
    }
    let withdrawals_root = body.withdrawals.as_ref().map(|w| proofs::calculate_withdrawals_root(w));
    if header.withdrawals_root.is_some() != withdrawals_root.is_some() {
        let (required, found) = if header.withdrawals_root.is_some() {
            (Rule::Present, Found::Absent)
        } else {
            (Rule::Absent, Found::Present)
        };
        let subject = Subject::BodyWithdrawals;
        return Err(ConsensusError::with(n, Field::WithdrawalsRoot, subject, found, Basis::Rules, required));
    }
    c.equal_opt(Field::WithdrawalsRoot, Basis::Body, withdrawals_root, header.withdrawals_root)?;
    let used = blob_gas_used(&body.transactions);
    match (spec.blob_params_at(header.timestamp), header.blob_gas_used) {
        (Some(params), Some(found)) => {
            c.equal(Field::BlobGasUsed, Basis::Body, used, found)?;
            let max = params.max_blob_gas_per_block();
            if used > max {
                return Err(c.fail(Field::BlobGasUsed, Basis::Rules, Rule::AtMost(max), Found::value(used)));
            }
        }
        // Blob transactions before Cancun: no header field to carry them.
        (None, None) if used > 0 => {
            let (found, required) = (Found::BlobGas(used), Rule::NoBlobsBeforeCancun);
            return Err(ConsensusError::with(n, Field::BlobGasUsed, Subject::Block, found, Basis::Rules, required));
        }
        _ => {}
    }
    Ok(())
}

/// After execution: the header must agree with what the block did.
pub fn check_executed(header: &Header, executed: &Executed) -> Result<(), ConsensusError> {
    let c = Check { number: header.number, subject: Subject::Header };
    c.equal(Field::GasUsed, Basis::Execution, executed.gas_used, header.gas_used)?;
    c.equal(Field::ReceiptsRoot, Basis::Execution, executed.receipts_root, header.receipts_root)?;
    c.equal(Field::LogsBloom, Basis::Execution, executed.logs_bloom, header.logs_bloom)?;
    c.equal_opt(Field::RequestsHash, Basis::Execution, executed.requests_hash, header.requests_hash)?;
    c.equal(Field::StateRoot, Basis::Execution, executed.state_root, header.state_root)?;
    Ok(())
}

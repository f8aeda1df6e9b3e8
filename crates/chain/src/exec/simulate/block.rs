//! Simulated blocks: the header derived from the parent and the block overrides (as geth
//! derives it), sealed with real roots and hash once the calls ran.

use std::sync::Arc;

use alloy_consensus::{proofs, Header};
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Bloom, Bytes, Log, B256, U256};
use alloy_rlp::Encodable;
use alloy_rpc_types_eth::BlockOverrides;
use revm::context_interface::result::ExecutionResult;

use super::sanitize::PlannedBlock;
use crate::consensus::{next_header, NextBlock};
use crate::error::{ChainResult, Halt, InvalidParam};
use crate::exec::errors::revert_message;
use crate::spec::ChainSpec;
use crate::types::ExecutedTx;

/// The header of a simulated block before its calls run. Fee recipient and gas limit
/// carry over from the parent, as in geth; `mixHash` is zero unless `prevRandao` is given.
pub fn open_header(
    spec: &ChainSpec,
    parent: &Header,
    parent_hash: B256,
    planned: &PlannedBlock,
    o: Option<&BlockOverrides>,
    validation: bool,
) -> ChainResult<Header> {
    let o = o.cloned().unwrap_or_default();
    let merged = spec.is_merged(planned.number);
    let next = NextBlock {
        timestamp: planned.timestamp,
        beneficiary: o.coinbase.unwrap_or(parent.beneficiary),
        gas_limit: o.gas_limit.unwrap_or(parent.gas_limit),
        mix_hash: o.random.unwrap_or_default(),
        difficulty: o.difficulty.unwrap_or(if merged { U256::ZERO } else { parent.difficulty }),
        parent_beacon_block_root: o.beacon_root.unwrap_or_default(),
    };
    let mut header = next_header(spec, parent, parent_hash, next);
    debug_assert_eq!(header.number, planned.number, "gaps are filled with blocks of their own");
    if header.base_fee_per_gas.is_some() {
        header.base_fee_per_gas = Some(match o.base_fee {
            Some(fee) => u64::try_from(fee).map_err(|_| InvalidParam::BaseFeeWidth)?,
            None if validation => header.base_fee_per_gas.unwrap_or_default(),
            // Without validation calls pay no fees, so the base fee is 0 (geth).
            None => 0,
        });
    }
    Ok(header)
}

/// A simulated block after its calls ran.
pub struct SimulatedBlock {
    pub header: Header,
    /// Set by `seal`.
    pub hash: B256,
    pub txs: Vec<Arc<ExecutedTx>>,
    /// Each transaction as it is hashed into `transactionsRoot`.
    pub encoded: Vec<Bytes>,
    pub withdrawals: Vec<Withdrawal>,
    pub calls: Vec<CallOutcome>,
}

impl SimulatedBlock {
    /// Fills in what the calls decided (gas, roots, bloom) and the block hash.
    /// The state root stays zero: a simulation commits no state.
    pub fn seal(&mut self, requests_hash: Option<B256>) {
        let h = &mut self.header;
        h.gas_used = self.txs.last().map(|t| t.receipt.cumulative_gas_used).unwrap_or(0);
        if h.blob_gas_used.is_some() {
            h.blob_gas_used = Some(self.txs.iter().map(|t| blob_gas(&t.tx)).sum());
        }
        if h.withdrawals_root.is_some() {
            h.withdrawals_root = Some(proofs::calculate_withdrawals_root(&self.withdrawals));
        }
        if h.requests_hash.is_some() {
            h.requests_hash = requests_hash.or(h.requests_hash);
        }
        h.transactions_root = alloy_trie::root::ordered_trie_root_encoded(&self.encoded);
        let receipts: Vec<_> = self.txs.iter().map(|t| t.receipt_envelope()).collect();
        h.receipts_root = proofs::calculate_receipt_root(&receipts);
        let mut bloom = Bloom::default();
        for r in &receipts {
            bloom.accrue_bloom(r.logs_bloom());
        }
        h.logs_bloom = bloom;
        self.hash = h.hash_slow();
    }

    /// RLP size of the block: header, transactions, no uncles, withdrawals.
    pub fn size(&self) -> usize {
        let txs: usize = self
            .txs
            .iter()
            .zip(&self.encoded)
            .map(
                |(t, raw)| if t.tx.as_eth().is_some_and(|t| t.is_legacy()) { raw.len() } else { raw.as_ref().length() },
            )
            .sum();
        let mut payload = self.header.length() + alloy_rlp::length_of_length(txs) + txs + 1;
        if self.header.withdrawals_root.is_some() {
            payload += self.withdrawals.length();
        }
        alloy_rlp::length_of_length(payload) + payload
    }
}

fn blob_gas(tx: &preconf_op::OpTx) -> u64 {
    use alloy_consensus::Transaction;
    tx.blob_versioned_hashes().map_or(0, |h| h.len() as u64 * alloy_eips::eip4844::DATA_GAS_PER_BLOB)
}

/// Why a simulated call failed (reported inside the result, not as a request error).
#[derive(Clone, Debug)]
pub enum CallFailure {
    Reverted { message: String, data: Bytes },
    Halted { message: String },
}

/// What one call did, as eth_simulateV1 reports it.
pub struct CallOutcome {
    pub success: bool,
    pub gas_used: u64,
    /// Gas the call needed before refunds (geth's `maxUsedGas`): enough to succeed again.
    pub max_used_gas: u64,
    pub return_data: Bytes,
    /// In execution order, with transfer logs when traced; empty when the call failed.
    pub logs: Vec<Log>,
    /// Block-wide `logIndex` of each log when it is not its position among the block's kept
    /// logs: geth counts the logs of failed frames too (`--profile geth`).
    pub log_indexes: Option<Vec<u64>>,
    pub error: Option<CallFailure>,
}

impl CallOutcome {
    pub fn new(result: &ExecutionResult, logs: Vec<Log>) -> Self {
        let gas = result.gas();
        let max_used_gas = gas.total_gas_spent().max(gas.floor_gas());
        let (success, return_data, error) = match result {
            ExecutionResult::Success { output, .. } => (true, output.data().clone(), None),
            ExecutionResult::Revert { output, .. } => (
                false,
                Bytes::new(),
                Some(CallFailure::Reverted { message: revert_message(output), data: output.clone() }),
            ),
            ExecutionResult::Halt { reason, .. } => {
                (false, Bytes::new(), Some(CallFailure::Halted { message: Halt::from(reason).to_string() }))
            }
        };
        let logs = if success { logs } else { Vec::new() };
        Self { success, gas_used: result.tx_gas_used(), max_used_gas, return_data, logs, log_indexes: None, error }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::request::sender;
    use crate::exec::simulate::calls::{unsigned_tx, with_fee_defaults};
    use alloy_consensus::Receipt;
    use alloy_consensus::{constants::EMPTY_OMMER_ROOT_HASH, EMPTY_ROOT_HASH};
    use alloy_eips::eip7685::EMPTY_REQUESTS_HASH;
    use alloy_rpc_types_eth::TransactionRequest;

    fn hash(s: &str) -> B256 {
        s.parse().unwrap()
    }

    /// ethSimulate-simple.io from the execution-apis fixtures: two transfers in block 0x37
    /// of their chain. With geth's state root put in, the header hashes as geth's does.
    #[test]
    fn sealed_block_matches_geth() {
        let header = Header {
            parent_hash: hash("0xd226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7"),
            ommers_hash: EMPTY_OMMER_ROOT_HASH,
            state_root: hash("0x026d07e9a1fb2c8e737ede84b4d70fd2c3be2872646b9ff1d13c215eb81354e5"),
            number: 0x37,
            gas_limit: 0xbebc200,
            timestamp: 0x228,
            base_fee_per_gas: Some(0),
            withdrawals_root: Some(EMPTY_ROOT_HASH),
            blob_gas_used: Some(0),
            excess_blob_gas: Some(0),
            parent_beacon_block_root: Some(B256::ZERO),
            requests_hash: Some(EMPTY_REQUESTS_HASH),
            ..Default::default()
        };
        let mut block = SimulatedBlock {
            header,
            hash: B256::ZERO,
            txs: vec![],
            encoded: vec![],
            withdrawals: vec![],
            calls: vec![],
        };
        for (i, (from, to)) in [("0xc0", "0xc1"), ("0xc1", "0xc2")].into_iter().enumerate() {
            let call: TransactionRequest = serde_json::from_value(serde_json::json!({
                "from": format!("{from}00000000000000000000000000000000000000"),
                "to": format!("{to}00000000000000000000000000000000000000"),
                "value": "0x3e8",
            }))
            .unwrap();
            let gas = 50_000_000 - 21_000 * i as u64;
            let tx = unsigned_tx(&with_fee_defaults(&call), 0xc72dd9d5e883e, 0, gas).unwrap();
            let receipt = Receipt { status: true.into(), cumulative_gas_used: 21_000 * (i as u64 + 1), logs: vec![] };
            block.txs.push(Arc::new(ExecutedTx::eth(tx.envelope, sender(&call), receipt, 21_000)));
            block.encoded.push(tx.encoded);
        }
        block.seal(Some(EMPTY_REQUESTS_HASH));
        let sealed = block.hash;
        assert_eq!(block.header.gas_used, 0xa410);
        assert_eq!(
            block.header.transactions_root,
            hash("0x6d79cfd6f20bf10a0b3831acf15402528b00992cb9a71302596de7fbb4ebfb07")
        );
        assert_eq!(
            block.header.receipts_root,
            hash("0x75308898d571eafb5cd8cde8278bf5b3d13c5f6ec074926de3bb895b519264e1")
        );
        assert_eq!(block.size(), 0x2c5);
        assert_eq!(sealed, hash("0xdb785f2444d7f68bc2bc04860c27ad059217192d17e2889ec801bcae9209b204"));
    }
}

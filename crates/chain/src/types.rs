//! Chain data shared across modules: block selectors, executed transactions, blocks.

use alloy_consensus::{Header, Receipt, ReceiptEnvelope, Transaction, TxEnvelope, TxType};
use alloy_eips::eip2718::{Decodable2718, Encodable2718};
use std::sync::Arc;

use alloy_primitives::{Address, Log, B256};

use crate::append::AppendList;
use crate::error::{Cause, ChainResult, InternalError, InvalidParam};
use crate::store::codec::StoredTx;

/// Which block a request refers to. The TypeScript side validates the JSON-RPC block
/// parameter and hands over a canonical string: a tag, a 0x quantity or a 0x hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockId {
    Latest,
    Pending,
    Safe,
    Finalized,
    Earliest,
    Number(u64),
    Hash(B256),
}

impl BlockId {
    /// The canonical selector string the TypeScript side hands over (alloy's parser).
    pub fn parse(s: &str) -> ChainResult<Self> {
        let id: alloy_eips::BlockId = s.parse().map_err(|e: alloy_eips::eip1898::ParseBlockIdError| {
            InvalidParam::BlockSelector { input: s.to_string(), reason: e.to_string() }
        })?;
        Ok(id.into())
    }
}

impl From<alloy_eips::BlockId> for BlockId {
    fn from(id: alloy_eips::BlockId) -> Self {
        use alloy_eips::BlockNumberOrTag as Tag;
        match id {
            alloy_eips::BlockId::Hash(h) => BlockId::Hash(h.block_hash),
            alloy_eips::BlockId::Number(Tag::Latest) => BlockId::Latest,
            alloy_eips::BlockId::Number(Tag::Pending) => BlockId::Pending,
            alloy_eips::BlockId::Number(Tag::Safe) => BlockId::Safe,
            alloy_eips::BlockId::Number(Tag::Finalized) => BlockId::Finalized,
            alloy_eips::BlockId::Number(Tag::Earliest) => BlockId::Earliest,
            alloy_eips::BlockId::Number(Tag::Number(n)) => BlockId::Number(n),
        }
    }
}

/// A transaction executed into a block, with its outcome.
#[derive(Clone, Debug)]
pub struct ExecutedTx {
    pub tx: TxEnvelope,
    pub sender: Address,
    pub receipt: Receipt<Log>,
    pub gas_used: u64,
}

impl ExecutedTx {
    pub fn hash(&self) -> B256 {
        *self.tx.tx_hash()
    }

    pub fn tx_type(&self) -> TxType {
        self.tx.tx_type()
    }

    /// The consensus receipt, as hashed into `receiptsRoot` and stored.
    pub fn receipt_envelope(&self) -> ReceiptEnvelope<Log> {
        ReceiptEnvelope::from_typed(self.tx_type(), self.receipt.clone().with_bloom())
    }

    /// Address of the contract a creation deployed.
    pub fn contract_address(&self) -> Option<Address> {
        if self.tx.is_create() {
            Some(self.sender.create(self.tx.nonce()))
        } else {
            None
        }
    }

    pub fn stored_tx(&self) -> StoredTx {
        StoredTx { raw: self.tx.encoded_2718().into(), sender: self.sender }
    }

    /// Rebuilds executed transactions from a stored body and its receipts.
    pub fn from_stored(txs: &[StoredTx], receipts: &[alloy_primitives::Bytes]) -> ChainResult<Vec<Arc<Self>>> {
        let mut out = Vec::with_capacity(txs.len());
        let mut prev_cumulative = 0;
        for (stored, raw_receipt) in txs.iter().zip(receipts) {
            let tx = TxEnvelope::decode_2718(&mut stored.raw.as_ref())
                .map_err(|e| InternalError::CorruptTx { number: None, source: Cause::new(e) })?;
            let envelope = ReceiptEnvelope::<Log>::decode_2718(&mut raw_receipt.as_ref())
                .map_err(|e| InternalError::CorruptReceipt(Cause::new(e)))?;
            let receipt = envelope.as_receipt().cloned().ok_or(InternalError::BadReceipt)?;
            let gas_used = receipt.cumulative_gas_used - prev_cumulative;
            prev_cumulative = receipt.cumulative_gas_used;
            out.push(Arc::new(ExecutedTx { tx, sender: stored.sender, receipt, gas_used }));
        }
        Ok(out)
    }
}

/// A block's transactions: one slice to read, shared by the versions of the block being built.
pub type TxList = AppendList<Arc<ExecutedTx>>;

/// A block with everything needed to answer reads about it.
#[derive(Clone, Debug, Default)]
pub struct BlockData {
    pub header: Header,
    /// `None` for the block being built (its hash is not known until it is sealed).
    pub hash: Option<B256>,
    pub txs: TxList,
    /// Index of the newest pre-confirmation (only for the block being built).
    pub preconf_index: Option<u64>,
    /// Uncle headers (imported proof-of-work blocks; built blocks have none).
    pub ommers: Vec<Header>,
    /// Withdrawals (imported blocks from Shanghai on; built blocks have none).
    pub withdrawals: Vec<alloy_eips::eip4895::Withdrawal>,
}

impl BlockData {
    /// RLP size of the block (header, transactions, no uncles, withdrawals if the fork has
    /// them): the `size` of the block object.
    pub fn rlp_size(&self) -> usize {
        self.rlp_size_with(Self::txs_rlp_payload(&self.txs))
    }

    /// The RLP payload of these transactions' list (what `rlp_size` adds up for the block's).
    pub fn txs_rlp_payload(txs: &[Arc<ExecutedTx>]) -> usize {
        use alloy_rlp::Encodable;
        txs.iter().map(|t| t.tx.length()).sum()
    }

    /// `rlp_size` with the transactions' part known (`txs_rlp_payload` of `self.txs`).
    pub fn rlp_size_with(&self, tx_payload: usize) -> usize {
        use alloy_rlp::Encodable;
        let mut payload = self.header.length();
        payload += alloy_rlp::length_of_length(tx_payload) + tx_payload;
        payload += self.ommers.length();
        if self.header.withdrawals_root.is_some() {
            payload += self.withdrawals.length();
        }
        alloy_rlp::length_of_length(payload) + payload
    }
}

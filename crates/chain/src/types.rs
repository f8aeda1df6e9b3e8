//! Chain data shared across modules: block selectors, executed transactions, blocks.

use alloy_consensus::{Header, Receipt, ReceiptEnvelope, Transaction, TxType};
use alloy_eips::Typed2718;
use preconf_op::OpTx;
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

/// A transaction executed into a block, with its outcome. An Ethereum chain's are all
/// `OpTx::Eth`; an OP chain's blocks also hold deposits.
#[derive(Clone, Debug)]
pub struct ExecutedTx {
    pub tx: OpTx,
    pub sender: Address,
    pub receipt: Receipt<Log>,
    pub gas_used: u64,
    /// A deposit's receipt nonce (its sender's nonce before it ran), from Canyon on, when
    /// the consensus receipt carries it. `None` for every other transaction.
    pub deposit_nonce: Option<u64>,
}

impl ExecutedTx {
    /// An Ethereum transaction executed (everything but the OP chain's deposits).
    pub fn eth(tx: alloy_consensus::TxEnvelope, sender: Address, receipt: Receipt<Log>, gas_used: u64) -> Self {
        Self { tx: OpTx::Eth(tx), sender, receipt, gas_used, deposit_nonce: None }
    }

    pub fn hash(&self) -> B256 {
        match &self.tx {
            OpTx::Eth(tx) => *tx.tx_hash(),
            OpTx::Deposit(d) => d.hash(),
        }
    }

    /// The EIP-2718 type byte (0x7E for a deposit).
    pub fn ty(&self) -> u8 {
        self.tx.ty()
    }

    /// The Ethereum receipt's type; a deposit's receipt reads as an EIP-1559 one where only
    /// an Ethereum type fits (JSON rendering patches the type).
    pub fn tx_type(&self) -> TxType {
        TxType::try_from(self.ty()).unwrap_or(TxType::Eip1559)
    }

    /// The consensus receipt of an Ethereum transaction (a deposit's: see `receipt_2718`).
    pub fn receipt_envelope(&self) -> ReceiptEnvelope<Log> {
        ReceiptEnvelope::from_typed(self.tx_type(), self.receipt.clone().with_bloom())
    }

    /// The consensus receipt's EIP-2718 encoding, as hashed into `receiptsRoot` and stored.
    pub fn receipt_2718(&self) -> Vec<u8> {
        preconf_op::receipt::encode_2718(self.ty(), self.receipt.clone(), self.deposit_nonce)
            .expect("an executed transaction has a known type")
    }

    /// Address of the contract a creation deployed.
    pub fn contract_address(&self) -> Option<Address> {
        if self.tx.is_create() {
            // A deposit has no nonce field: its receipt records the sender's.
            Some(self.sender.create(self.deposit_nonce.unwrap_or_else(|| self.tx.nonce())))
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
            let tx = OpTx::decode_2718(&stored.raw)
                .map_err(|e| InternalError::CorruptTx { number: None, source: Cause::new(e) })?;
            let decoded = preconf_op::receipt::decode_2718(raw_receipt)
                .map_err(|e| InternalError::CorruptReceipt(Cause::new(e)))?;
            let (receipt, deposit_nonce) = (decoded.receipt, decoded.deposit_nonce);
            let gas_used = receipt.cumulative_gas_used - prev_cumulative;
            prev_cumulative = receipt.cumulative_gas_used;
            out.push(Arc::new(ExecutedTx { tx, sender: stored.sender, receipt, gas_used, deposit_nonce }));
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
    /// The Engine API's payload id when `engine_forkchoiceUpdated` started this block (a
    /// block being built in sequencer mode): the flashblocks' `payload_id`.
    pub payload_id: Option<alloy_primitives::B64>,
}

impl BlockData {
    /// RLP size of the block (header, transactions, no uncles, withdrawals if the fork has
    /// them): the `size` of the block object.
    pub fn rlp_size(&self) -> usize {
        self.rlp_size_with(Self::txs_rlp_payload(&self.txs))
    }

    /// The RLP payload of these transactions' list (what `rlp_size` adds up for the block's).
    pub fn txs_rlp_payload(txs: &[Arc<ExecutedTx>]) -> usize {
        txs.iter().map(|t| t.tx.rlp_length()).sum()
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

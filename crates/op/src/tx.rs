//! A transaction of an OP block: a deposit, or an Ethereum transaction (legacy, EIP-2930,
//! EIP-1559, EIP-7702 after Isthmus; OP chains have no blob transactions).

use alloy_consensus::{transaction::SignerRecoverable, Transaction as _, TxEnvelope};
use alloy_eips::eip2718::{Decodable2718, Encodable2718};
use alloy_eips::eip2930::AccessList;
use alloy_eips::eip7702::SignedAuthorization;
use alloy_eips::Typed2718;
use alloy_primitives::{Address, Bytes, TxKind, B256, U256};
use op_revm::transaction::deposit::DepositTransactionParts;
use op_revm::OpTransaction;
use revm::context::TxEnv;

use crate::deposit::{TxDeposit, DEPOSIT_TX_TYPE};

/// Ethereum transactions dominate OP blocks, so boxing them (what the lint suggests) would
/// cost an allocation on nearly every transaction to save bytes on the rare deposit.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpTx {
    Deposit(TxDeposit),
    Eth(TxEnvelope),
}

#[derive(Debug, thiserror::Error)]
pub enum OpTxError {
    #[error("transaction does not decode: {0}")]
    Decode(String),
    #[error("invalid sender: {0}")]
    Sender(String),
}

impl OpTx {
    pub fn decode_2718(raw: &[u8]) -> Result<Self, OpTxError> {
        if raw.first() == Some(&DEPOSIT_TX_TYPE) {
            return TxDeposit::decode_2718(raw).map(Self::Deposit).map_err(|e| OpTxError::Decode(e.to_string()));
        }
        let mut buf = raw;
        let tx = TxEnvelope::decode_2718(&mut buf).map_err(|e| OpTxError::Decode(e.to_string()))?;
        if !buf.is_empty() {
            return Err(OpTxError::Decode("bytes after the transaction".into()));
        }
        Ok(Self::Eth(tx))
    }

    pub fn encoded_2718(&self) -> Vec<u8> {
        match self {
            Self::Deposit(d) => d.encoded_2718(),
            Self::Eth(tx) => tx.encoded_2718(),
        }
    }

    pub fn hash(&self) -> B256 {
        match self {
            Self::Deposit(d) => d.hash(),
            Self::Eth(tx) => *tx.tx_hash(),
        }
    }

    pub fn is_deposit(&self) -> bool {
        matches!(self, Self::Deposit(_))
    }

    /// The Ethereum transaction, `None` for a deposit.
    pub fn as_eth(&self) -> Option<&TxEnvelope> {
        match self {
            Self::Eth(tx) => Some(tx),
            Self::Deposit(_) => None,
        }
    }

    /// The length of the transaction in a block body's RLP list: a typed transaction is
    /// an RLP string of its EIP-2718 encoding, a legacy one its own list.
    pub fn rlp_length(&self) -> usize {
        match self {
            Self::Eth(tx) => alloy_rlp::Encodable::length(tx),
            Self::Deposit(d) => {
                let len = d.encoded_2718().len();
                alloy_rlp::length_of_length(len) + len
            }
        }
    }

    /// The sender: a deposit's `from`, or the signer of any other transaction.
    pub fn sender(&self) -> Result<Address, OpTxError> {
        match self {
            Self::Deposit(d) => Ok(d.from),
            Self::Eth(tx) => tx.recover_signer().map_err(|e| OpTxError::Sender(e.to_string())),
        }
    }

    pub fn gas_limit(&self) -> u64 {
        match self {
            Self::Deposit(d) => d.gas_limit,
            Self::Eth(tx) => tx.gas_limit(),
        }
    }

    /// op-revm's transaction. Non-deposits carry their encoding, from which op-revm
    /// computes the L1 data fee.
    pub fn to_op_env(&self, sender: Address) -> OpTransaction<TxEnv> {
        match self {
            Self::Deposit(d) => OpTransaction {
                base: TxEnv {
                    tx_type: DEPOSIT_TX_TYPE,
                    caller: d.from,
                    gas_limit: d.gas_limit,
                    gas_price: 0,
                    kind: d.to,
                    value: d.value,
                    data: d.input.clone(),
                    ..Default::default()
                },
                enveloped_tx: None,
                deposit: DepositTransactionParts {
                    source_hash: d.source_hash,
                    mint: Some(d.mint),
                    is_system_transaction: d.is_system_transaction,
                },
            },
            Self::Eth(tx) => OpTransaction {
                base: eth_tx_env(tx, sender),
                enveloped_tx: Some(Bytes::from(tx.encoded_2718())),
                deposit: DepositTransactionParts::default(),
            },
        }
    }
}

/// revm's fields of an Ethereum transaction.
fn eth_tx_env(tx: &TxEnvelope, sender: Address) -> TxEnv {
    let mut env = TxEnv {
        tx_type: tx.ty(),
        caller: sender,
        gas_limit: tx.gas_limit(),
        gas_price: if tx.is_dynamic_fee() { tx.max_fee_per_gas() } else { tx.gas_price().unwrap_or_default() },
        kind: tx.kind(),
        value: tx.value(),
        data: tx.input().clone(),
        nonce: tx.nonce(),
        chain_id: tx.chain_id(),
        access_list: tx.access_list().cloned().unwrap_or_default(),
        gas_priority_fee: if tx.is_dynamic_fee() { tx.max_priority_fee_per_gas() } else { None },
        ..Default::default()
    };
    if let Some(auths) = tx.authorization_list() {
        env.set_signed_authorization(auths.to_vec());
    }
    env
}

/// A deposit as alloy's transaction: no nonce of its own (the sender's nonce is bumped and
/// the receipt names it), no fee fields (it buys its gas on L1), no chain id, no access list.
impl Typed2718 for TxDeposit {
    fn ty(&self) -> u8 {
        DEPOSIT_TX_TYPE
    }
}

impl alloy_consensus::Transaction for TxDeposit {
    fn chain_id(&self) -> Option<u64> {
        None
    }
    fn nonce(&self) -> u64 {
        0
    }
    fn gas_limit(&self) -> u64 {
        self.gas_limit
    }
    fn gas_price(&self) -> Option<u128> {
        None
    }
    fn max_fee_per_gas(&self) -> u128 {
        0
    }
    fn max_priority_fee_per_gas(&self) -> Option<u128> {
        None
    }
    fn max_fee_per_blob_gas(&self) -> Option<u128> {
        None
    }
    fn priority_fee_or_price(&self) -> u128 {
        0
    }
    fn effective_gas_price(&self, _base_fee: Option<u64>) -> u128 {
        0
    }
    fn is_dynamic_fee(&self) -> bool {
        false
    }
    fn kind(&self) -> TxKind {
        self.to
    }
    fn is_create(&self) -> bool {
        self.to.is_create()
    }
    fn value(&self) -> U256 {
        self.value
    }
    fn input(&self) -> &Bytes {
        &self.input
    }
    fn access_list(&self) -> Option<&AccessList> {
        None
    }
    fn blob_versioned_hashes(&self) -> Option<&[B256]> {
        None
    }
    fn authorization_list(&self) -> Option<&[SignedAuthorization]> {
        None
    }
}

impl Typed2718 for OpTx {
    fn ty(&self) -> u8 {
        match self {
            Self::Deposit(d) => d.ty(),
            Self::Eth(tx) => tx.ty(),
        }
    }
}

/// Either kind through one interface, so code written against alloy's `Transaction` (fees,
/// receipts, rendering) takes an OP block's transactions unchanged.
macro_rules! both {
    ($self:ident, $tx:ident => $e:expr) => {
        match $self {
            OpTx::Deposit($tx) => $e,
            OpTx::Eth($tx) => $e,
        }
    };
}

impl alloy_consensus::Transaction for OpTx {
    fn chain_id(&self) -> Option<u64> {
        both!(self, t => t.chain_id())
    }
    fn nonce(&self) -> u64 {
        both!(self, t => t.nonce())
    }
    fn gas_limit(&self) -> u64 {
        both!(self, t => t.gas_limit())
    }
    fn gas_price(&self) -> Option<u128> {
        both!(self, t => t.gas_price())
    }
    fn max_fee_per_gas(&self) -> u128 {
        both!(self, t => t.max_fee_per_gas())
    }
    fn max_priority_fee_per_gas(&self) -> Option<u128> {
        both!(self, t => t.max_priority_fee_per_gas())
    }
    fn max_fee_per_blob_gas(&self) -> Option<u128> {
        both!(self, t => t.max_fee_per_blob_gas())
    }
    fn priority_fee_or_price(&self) -> u128 {
        both!(self, t => t.priority_fee_or_price())
    }
    fn effective_gas_price(&self, base_fee: Option<u64>) -> u128 {
        both!(self, t => t.effective_gas_price(base_fee))
    }
    fn is_dynamic_fee(&self) -> bool {
        both!(self, t => t.is_dynamic_fee())
    }
    fn kind(&self) -> TxKind {
        both!(self, t => t.kind())
    }
    fn is_create(&self) -> bool {
        both!(self, t => t.is_create())
    }
    fn value(&self) -> U256 {
        both!(self, t => t.value())
    }
    fn input(&self) -> &Bytes {
        both!(self, t => t.input())
    }
    fn access_list(&self) -> Option<&AccessList> {
        both!(self, t => t.access_list())
    }
    fn blob_versioned_hashes(&self) -> Option<&[B256]> {
        both!(self, t => t.blob_versioned_hashes())
    }
    fn authorization_list(&self) -> Option<&[SignedAuthorization]> {
        both!(self, t => t.authorization_list())
    }
}

/// A transaction in a block body's RLP list (what `geth export` and op-geth write): a
/// legacy one is its own RLP list, a typed one (a deposit included) an RLP string of its
/// EIP-2718 encoding.
impl alloy_rlp::Encodable for OpTx {
    fn encode(&self, out: &mut dyn alloy_rlp::BufMut) {
        match self {
            Self::Eth(tx) => tx.encode(out),
            Self::Deposit(d) => {
                let raw = d.encoded_2718();
                alloy_rlp::Header { list: false, payload_length: raw.len() }.encode(out);
                out.put_slice(&raw);
            }
        }
    }

    fn length(&self) -> usize {
        self.rlp_length()
    }
}

impl alloy_rlp::Decodable for OpTx {
    fn decode(buf: &mut &[u8]) -> alloy_rlp::Result<Self> {
        let mut peek = *buf;
        let header = alloy_rlp::Header::decode(&mut peek)?;
        if header.list || peek.first() != Some(&DEPOSIT_TX_TYPE) {
            return TxEnvelope::decode(buf).map(Self::Eth);
        }
        let raw = peek.get(..header.payload_length).ok_or(alloy_rlp::Error::InputTooShort)?;
        let deposit = TxDeposit::decode_2718(raw)?;
        *buf = &peek[header.payload_length..];
        Ok(Self::Deposit(deposit))
    }
}

/// So alloy's root functions (`calculate_transaction_root`) take an OP block's transactions.
impl Encodable2718 for OpTx {
    fn encode_2718_len(&self) -> usize {
        match self {
            Self::Eth(tx) => tx.encode_2718_len(),
            Self::Deposit(d) => d.encoded_2718().len(),
        }
    }

    fn encode_2718(&self, out: &mut dyn alloy_rlp::BufMut) {
        match self {
            Self::Eth(tx) => tx.encode_2718(out),
            Self::Deposit(d) => out.put_slice(&d.encoded_2718()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deposit_reads_as_a_transaction_without_fees() {
        let deposit = crate::dev::DevL1Values::default().l1_info_deposit(0);
        let tx = OpTx::decode_2718(&deposit.encoded_2718()).unwrap();
        assert_eq!(tx.ty(), DEPOSIT_TX_TYPE);
        assert_eq!(tx.to(), Some(crate::dev::L1_BLOCK));
        assert_eq!(tx.gas_limit(), crate::dev::L1_INFO_GAS);
        assert_eq!((tx.effective_gas_price(Some(7)), tx.effective_tip_per_gas(7)), (0, None));
        assert_eq!((tx.chain_id(), tx.nonce(), tx.max_fee_per_gas()), (None, 0, 0));
        assert_eq!(tx.input(), &deposit.input);
        assert_eq!(tx.hash(), deposit.hash());
    }
}

//! A transaction of an OP block: a deposit, or an Ethereum transaction (legacy, EIP-2930,
//! EIP-1559, EIP-7702 after Isthmus; OP chains have no blob transactions).

use alloy_consensus::{transaction::SignerRecoverable, Transaction as _, TxEnvelope};
use alloy_eips::eip2718::{Decodable2718, Encodable2718};
use alloy_eips::Typed2718;
use alloy_primitives::{Address, Bytes, B256};
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

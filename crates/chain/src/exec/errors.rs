//! revm outcomes in geth's words: revert reasons and refused transactions (halts: error::Halt).

use alloy_primitives::{Address, Bytes};
use alloy_sol_types::{Panic, Revert, SolError};
use revm::context_interface::result::{EVMError, InvalidTransaction};

use crate::error::{Cause, ChainError, ExecutionReverted, InternalError, InvalidTx};

/// The reason in `Error(string)` or `Panic(uint256)` revert data, as geth renders it.
pub fn decode_revert_reason(data: &[u8]) -> Option<String> {
    if let Ok(revert) = Revert::abi_decode(data) {
        return Some(revert.reason);
    }
    Panic::abi_decode(data).ok().map(|panic| panic.as_geth_str().into_owned())
}

/// "execution reverted" plus ": reason" when the data is Error(string) or Panic(uint256).
pub fn revert_message(data: &[u8]) -> String {
    ExecutionReverted { reason: decode_revert_reason(data) }.to_string()
}

pub fn reverted(data: Bytes) -> ChainError {
    ChainError::Reverted { revert: ExecutionReverted { reason: decode_revert_reason(&data) }, data }
}

/// Why revm refused a transaction before executing it, as the node's [`InvalidTx`].
pub fn invalid_tx(err: &InvalidTransaction, sender: Address) -> InvalidTx {
    match err {
        InvalidTransaction::NonceTooLow { tx, state } => InvalidTx::NonceTooLow { sender, tx: *tx, state: *state },
        InvalidTransaction::NonceTooHigh { tx, state } => InvalidTx::NonceTooHigh { sender, tx: *tx, state: *state },
        InvalidTransaction::NonceOverflowInTransaction => InvalidTx::NonceMax { sender },
        InvalidTransaction::LackOfFundForMaxFee { fee, balance } => {
            InvalidTx::InsufficientFunds { sender, have: **balance, want: **fee }
        }
        InvalidTransaction::OverflowPaymentInTransaction => InvalidTx::CostOverflow,
        InvalidTransaction::GasPriceLessThanBasefee => InvalidTx::FeeCapTooLow,
        InvalidTransaction::PriorityFeeGreaterThanMaxFee => InvalidTx::TipAboveFeeCap,
        InvalidTransaction::CallerGasLimitMoreThanBlock => InvalidTx::GasLimitAboveBlock,
        InvalidTransaction::TxGasLimitGreaterThanCap { gas_limit, cap } => {
            InvalidTx::GasLimitAboveCap { gas_limit: *gas_limit, cap: *cap }
        }
        InvalidTransaction::CallGasCostMoreThanGasLimit { initial_gas, gas_limit } => {
            InvalidTx::IntrinsicGasTooLow { have: *gas_limit, want: *initial_gas }
        }
        InvalidTransaction::GasFloorMoreThanGasLimit { gas_floor, gas_limit } => {
            InvalidTx::IntrinsicGasTooLow { have: *gas_limit, want: *gas_floor }
        }
        InvalidTransaction::RejectCallerWithCode => InvalidTx::SenderNotEoa { sender },
        InvalidTransaction::CreateInitCodeSizeLimit => InvalidTx::InitCodeTooLarge,
        InvalidTransaction::InvalidChainId | InvalidTransaction::MissingChainId => InvalidTx::InvalidChainId,
        InvalidTransaction::EmptyAuthorizationList => InvalidTx::EmptyAuthorizationList,
        InvalidTransaction::Eip2930NotSupported
        | InvalidTransaction::Eip1559NotSupported
        | InvalidTransaction::Eip4844NotSupported
        | InvalidTransaction::Eip7702NotSupported => InvalidTx::TypeNotSupported,
        other => InvalidTx::Other(other.to_string()),
    }
}

/// Maps an EVM error to a chain error; database failures are internal.
pub fn evm_error(err: EVMError<ChainError>, sender: Address) -> ChainError {
    match err {
        EVMError::Transaction(e) => invalid_tx(&e, sender).into(),
        other => evm_fault(other),
    }
}

/// An EVM error that is not the transaction's: the database's own, or internal.
pub fn evm_fault(err: EVMError<ChainError>) -> ChainError {
    match err {
        EVMError::Database(e) => e,
        EVMError::Header(e) => InternalError::BlockHeader(Cause::new(e)).into(),
        other => InternalError::Evm(Cause::new(other)).into(),
    }
}

#[cfg(test)]
mod tests {
    use alloy_primitives::{hex, U256};
    use alloy_sol_types::{Panic, Revert, SolError};

    use super::*;

    #[test]
    fn revert_reasons_read_as_geth_renders_them() {
        let reason = Revert::from("not enough tokens").abi_encode();
        assert_eq!(revert_message(&reason), "execution reverted: not enough tokens");
        let overflow = Panic { code: U256::from(0x11) }.abi_encode();
        assert_eq!(revert_message(&overflow), "execution reverted: arithmetic underflow or overflow");
        let unknown = Panic { code: U256::from(0x99) }.abi_encode();
        assert_eq!(revert_message(&unknown), "execution reverted: unknown panic code: 0x99");
        // A custom error, a cut-off reason, no data: the bare message.
        assert_eq!(revert_message(&hex!("deadbeef")), "execution reverted");
        assert_eq!(revert_message(&reason[..40]), "execution reverted");
        assert_eq!(revert_message(&[]), "execution reverted");
    }
}

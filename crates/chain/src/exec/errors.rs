//! revm outcomes in geth's words: revert reasons, halts, and refused transactions.

use alloy_primitives::{Address, Bytes, U256};
use revm::context_interface::result::{EVMError, HaltReason, InvalidTransaction, OutOfGasError};

use crate::error::ChainError;

const ERROR_SELECTOR: [u8; 4] = [0x08, 0xc3, 0x79, 0xa0];
const PANIC_SELECTOR: [u8; 4] = [0x4e, 0x48, 0x7b, 0x71];

/// The reason in `Error(string)` or `Panic(uint256)` revert data, as geth renders it.
pub fn decode_revert_reason(data: &[u8]) -> Option<String> {
    if data.len() < 4 {
        return None;
    }
    let (selector, body) = data.split_at(4);
    if selector == ERROR_SELECTOR {
        let word = |i: usize| body.get(i * 32..i * 32 + 32).map(U256::from_be_slice);
        let offset: usize = word(0)?.try_into().ok()?;
        let len_word = body.get(offset..offset + 32).map(U256::from_be_slice)?;
        let len: usize = len_word.try_into().ok()?;
        let start = offset.checked_add(32)?;
        let bytes = body.get(start..start.checked_add(len)?)?;
        return String::from_utf8(bytes.to_vec()).ok();
    }
    if selector == PANIC_SELECTOR && body.len() == 32 {
        let code = U256::from_be_slice(body);
        let reason = match u64::try_from(code).unwrap_or(u64::MAX) {
            0x00 => "generic panic",
            0x01 => "assert(false)",
            0x11 => "arithmetic underflow or overflow",
            0x12 => "division or modulo by zero",
            0x21 => "enum overflow",
            0x22 => "invalid encoded storage byte array accessed",
            0x31 => "out-of-bounds array access; popping on an empty array",
            0x32 => "out-of-bounds access of an array or bytesN",
            0x41 => "out of memory",
            0x51 => "uninitialized function",
            _ => return Some(format!("unknown panic code: {code:#x}")),
        };
        return Some(reason.to_string());
    }
    None
}

/// "execution reverted" plus ": reason" when the data is Error(string) or Panic(uint256).
pub fn revert_message(data: &[u8]) -> String {
    match decode_revert_reason(data) {
        Some(reason) => format!("execution reverted: {reason}"),
        None => "execution reverted".to_string(),
    }
}

pub fn reverted(data: Bytes) -> ChainError {
    ChainError::Reverted { message: revert_message(&data), data }
}

/// geth's message for an EVM halt.
pub fn halt_message(reason: &HaltReason) -> String {
    match reason {
        HaltReason::OutOfGas(kind) => match kind {
            OutOfGasError::Basic | OutOfGasError::ReentrancySentry => "out of gas".into(),
            OutOfGasError::MemoryLimit | OutOfGasError::Memory => "out of gas: memory".into(),
            OutOfGasError::Precompile => "out of gas: precompile".into(),
            OutOfGasError::InvalidOperand => "out of gas: invalid operand".into(),
        },
        HaltReason::OpcodeNotFound | HaltReason::InvalidFEOpcode | HaltReason::NotActivated => "invalid opcode".into(),
        HaltReason::InvalidJump => "invalid jump destination".into(),
        HaltReason::StackUnderflow => "stack underflow".into(),
        HaltReason::StackOverflow => "stack limit reached 1024".into(),
        HaltReason::OutOfOffset => "return data out of bounds".into(),
        HaltReason::CreateCollision => "contract address collision".into(),
        HaltReason::PrecompileError => "precompile failed".into(),
        HaltReason::PrecompileErrorWithContext(msg) => format!("precompile failed: {msg}"),
        HaltReason::NonceOverflow => "nonce uint64 overflow".into(),
        HaltReason::CreateContractSizeLimit => "max code size exceeded".into(),
        HaltReason::CreateContractStartingWithEF => "invalid code: must not begin with 0xef".into(),
        HaltReason::CreateInitCodeSizeLimit => "max initcode size exceeded".into(),
        HaltReason::OverflowPayment => "gas uint64 overflow".into(),
        HaltReason::StateChangeDuringStaticCall | HaltReason::CallNotAllowedInsideStatic => "write protection".into(),
        HaltReason::OutOfFunds => "insufficient balance for transfer".into(),
        HaltReason::CallTooDeep => "max call depth exceeded".into(),
    }
}

/// Why a transaction was refused before execution, in geth's words (viem matches on them).
pub fn invalid_tx_message(err: &InvalidTransaction, sender: Address, gas_limit: u64) -> String {
    match err {
        InvalidTransaction::NonceTooLow { tx, state } => {
            format!("nonce too low: address {sender}, tx: {tx} state: {state}")
        }
        InvalidTransaction::NonceTooHigh { tx, state } => {
            format!("nonce too high: address {sender}, tx: {tx} state: {state}")
        }
        InvalidTransaction::NonceOverflowInTransaction => {
            format!("nonce has max value: address {sender}, nonce: {}", u64::MAX)
        }
        InvalidTransaction::LackOfFundForMaxFee { fee, balance } => {
            format!("insufficient funds for gas * price + value: address {sender} have {balance} want {fee}")
        }
        InvalidTransaction::OverflowPaymentInTransaction => "insufficient funds for gas * price + value".into(),
        InvalidTransaction::GasPriceLessThanBasefee => "max fee per gas less than block base fee".into(),
        InvalidTransaction::PriorityFeeGreaterThanMaxFee => {
            "max priority fee per gas higher than max fee per gas".into()
        }
        InvalidTransaction::CallerGasLimitMoreThanBlock => "exceeds block gas limit".into(),
        InvalidTransaction::TxGasLimitGreaterThanCap { gas_limit, cap } => {
            format!("transaction gas limit too high (cap: {cap}, tx: {gas_limit})")
        }
        InvalidTransaction::CallGasCostMoreThanGasLimit { initial_gas, gas_limit } => {
            format!("intrinsic gas too low: have {gas_limit}, want {initial_gas}")
        }
        InvalidTransaction::GasFloorMoreThanGasLimit { gas_floor, gas_limit } => {
            format!("intrinsic gas too low: have {gas_limit}, want {gas_floor}")
        }
        InvalidTransaction::RejectCallerWithCode => format!("sender not an eoa: address {sender}"),
        InvalidTransaction::CreateInitCodeSizeLimit => "max initcode size exceeded".into(),
        InvalidTransaction::InvalidChainId | InvalidTransaction::MissingChainId => "invalid chain id".into(),
        InvalidTransaction::EmptyAuthorizationList => "empty authorization list".into(),
        InvalidTransaction::Eip2930NotSupported
        | InvalidTransaction::Eip1559NotSupported
        | InvalidTransaction::Eip4844NotSupported
        | InvalidTransaction::Eip7702NotSupported => "transaction type not supported".into(),
        other => {
            let _ = gas_limit;
            format!("invalid transaction: {other}")
        }
    }
}

/// Maps an EVM error to a chain error; database failures are internal.
pub fn evm_error(err: EVMError<ChainError>, sender: Address, gas_limit: u64) -> ChainError {
    match err {
        EVMError::Transaction(e) => ChainError::Rejected(invalid_tx_message(&e, sender, gas_limit)),
        EVMError::Database(e) => e,
        EVMError::Header(e) => ChainError::Internal(format!("invalid block header: {e}")),
        other => ChainError::Internal(other.to_string()),
    }
}

//! Why a call stopped with an EVM halt, in geth's words (its vm errors): clients match
//! "out of gas" and "invalid opcode".

use revm::context_interface::result::{HaltReason, OutOfGasError};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Halt {
    #[error("out of gas")]
    OutOfGas,
    #[error("out of gas: memory")]
    OutOfGasMemory,
    #[error("out of gas: precompile")]
    OutOfGasPrecompile,
    #[error("out of gas: invalid operand")]
    OutOfGasInvalidOperand,
    #[error("invalid opcode")]
    InvalidOpcode,
    #[error("invalid jump destination")]
    InvalidJump,
    #[error("stack underflow")]
    StackUnderflow,
    #[error("stack limit reached 1024")]
    StackOverflow,
    #[error("return data out of bounds")]
    ReturnDataOutOfBounds,
    #[error("contract address collision")]
    AddressCollision,
    #[error("precompile failed")]
    PrecompileFailed,
    /// The precompile's own words.
    #[error("precompile failed: {0}")]
    PrecompileFailedWith(String),
    #[error("nonce uint64 overflow")]
    NonceOverflow,
    #[error("max code size exceeded")]
    CodeSizeExceeded,
    #[error("invalid code: must not begin with 0xef")]
    CodeStartsWithEf,
    #[error("max initcode size exceeded")]
    InitCodeSizeExceeded,
    #[error("gas uint64 overflow")]
    GasOverflow,
    #[error("write protection")]
    WriteProtection,
    #[error("insufficient balance for transfer")]
    InsufficientBalance,
    #[error("max call depth exceeded")]
    CallTooDeep,
}

impl From<&HaltReason> for Halt {
    fn from(reason: &HaltReason) -> Self {
        match reason {
            HaltReason::OutOfGas(kind) => match kind {
                OutOfGasError::Basic | OutOfGasError::ReentrancySentry => Halt::OutOfGas,
                OutOfGasError::MemoryLimit | OutOfGasError::Memory => Halt::OutOfGasMemory,
                OutOfGasError::Precompile => Halt::OutOfGasPrecompile,
                OutOfGasError::InvalidOperand => Halt::OutOfGasInvalidOperand,
            },
            HaltReason::OpcodeNotFound | HaltReason::InvalidFEOpcode | HaltReason::NotActivated => Halt::InvalidOpcode,
            HaltReason::InvalidJump => Halt::InvalidJump,
            HaltReason::StackUnderflow => Halt::StackUnderflow,
            HaltReason::StackOverflow => Halt::StackOverflow,
            HaltReason::OutOfOffset => Halt::ReturnDataOutOfBounds,
            HaltReason::CreateCollision => Halt::AddressCollision,
            HaltReason::PrecompileError => Halt::PrecompileFailed,
            HaltReason::PrecompileErrorWithContext(msg) => Halt::PrecompileFailedWith(msg.clone()),
            HaltReason::NonceOverflow => Halt::NonceOverflow,
            HaltReason::CreateContractSizeLimit => Halt::CodeSizeExceeded,
            HaltReason::CreateContractStartingWithEF => Halt::CodeStartsWithEf,
            HaltReason::CreateInitCodeSizeLimit => Halt::InitCodeSizeExceeded,
            HaltReason::OverflowPayment => Halt::GasOverflow,
            HaltReason::StateChangeDuringStaticCall | HaltReason::CallNotAllowedInsideStatic => Halt::WriteProtection,
            HaltReason::OutOfFunds => Halt::InsufficientBalance,
            HaltReason::CallTooDeep => Halt::CallTooDeep,
        }
    }
}

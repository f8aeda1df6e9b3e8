//! eth_simulateV1's refusals of a request as a whole, each with the -380xx code geth gives
//! it (src/errors/ maps the code). geth's words where geth has them; the conformance
//! fixtures (test/fixtures/rpc-compat) compare them byte for byte.

use alloy_primitives::Address;

use super::InvalidTx;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimulateError {
    /// A call revm refused before running it; `code` says which of geth's -380xx it is.
    #[error("err: {reason} (supplied gas {gas})")]
    Refused { code: SimulateCode, reason: Box<InvalidTx>, gas: u64 },
    /// A call whose fee cap is below an overridden base fee with validation off.
    #[error("err: {0}")]
    FeeCapBelowBaseFee(Box<InvalidTx>),
    /// A call got less gas than it asked for and ran short: the request's budget, not the call.
    #[error("the request's gas budget is used up: {0}")]
    BudgetRanShort(Box<InvalidTx>),
    #[error("the request's gas budget of {0} is used up")]
    BudgetUsedUp(u64),
    #[error("too many calls in one block: {calls} > {max}")]
    TooManyCallsInBlock { calls: usize, max: usize },
    #[error("too many calls: {total} > {max}")]
    TooManyCalls { total: usize, max: usize },
    #[error("too many blocks: more than {max} after block {base}")]
    TooManyBlocks { max: usize, base: u64 },
    #[error("block number overflows")]
    NumberOverflow,
    #[error("block number does not fit 64 bits")]
    NumberWidth,
    #[error("block numbers must be in order: {number} <= {previous}")]
    NumbersOutOfOrder { number: u64, previous: u64 },
    #[error("block timestamp overflows")]
    TimestampOverflow,
    #[error("block timestamps must be in order: {timestamp} <= {previous}")]
    TimestampsOutOfOrder { timestamp: u64, previous: u64 },
    #[error("block gas limit reached: {used} used, {asked} more asked of {limit}")]
    BlockGasLimit { used: u64, asked: u64, limit: u64 },
    #[error("chainId does not match node's (have={have}, want={want})")]
    ChainId { have: u64, want: u64 },
    #[error("account {0} is not a precompile")]
    NotAPrecompile(Address),
    #[error("precompile {0} cannot be moved onto itself")]
    MoveOntoItself(Address),
    #[error("precompiles {first} and {second} are both moved to {to}")]
    MovedTogether { first: Address, second: Address, to: Address },
    #[error("account {0} is already overridden")]
    AlreadyOverridden(Address),
    #[error("execution aborted (timeout = {ms}ms)")]
    Timeout { ms: u128 },
}

/// Hands the list of eth_simulateV1 code families to `$m!`, after the tokens given: this
/// crate declares [`SimulateCode`] from it, the addon its error kinds (one kind per code), so
/// the list is written once.
#[macro_export]
macro_rules! with_simulate_codes {
    ($m:ident { $($before:tt)* }) => {
        $m! {
            $($before)*
            simulate: [
            NonceTooLow,
            NonceTooHigh,
            BaseFeeTooLow,
            IntrinsicGasTooLow,
            InsufficientFunds,
            BlockGasLimitExceeded,
            BlockNumberInvalid,
            TimestampInvalid,
            PrecompileSelfReference,
            PrecompileDuplicateAddress,
            ClientLimitExceeded,
            /// The sender has code that is not a delegation (geth: -38024).
            SenderNotEoa,
            /// Contract creation with init code over the limit (geth: -38025).
            MaxInitCodeSizeExceeded,
            /// Errors geth reports with plain -32000 inside simulate (e.g. "not a precompile").
            Generic,
            /// Errors geth reports with -32603 inside simulate (e.g. nonce overflow).
            InternalError,
            /// The simulation ran past its wall-clock budget (-32016).
            Timeout,
            ]
        }
    };
}

macro_rules! declare_simulate_code {
    (simulate: [$($(#[$doc:meta])* $code:ident,)*]) => {
        /// The JSON-RPC code family of a [`SimulateError`] (-380xx, or geth's plain codes).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum SimulateCode {
            $($(#[$doc])* $code,)*
        }
    };
}

with_simulate_codes!(declare_simulate_code {});

impl SimulateError {
    pub fn code(&self) -> SimulateCode {
        use SimulateError as E;
        match self {
            E::Refused { code, .. } => *code,
            E::FeeCapBelowBaseFee(_) => SimulateCode::BaseFeeTooLow,
            E::BudgetRanShort(_)
            | E::BudgetUsedUp(_)
            | E::TooManyCallsInBlock { .. }
            | E::TooManyCalls { .. }
            | E::TooManyBlocks { .. } => SimulateCode::ClientLimitExceeded,
            E::NumberOverflow | E::NumberWidth | E::NumbersOutOfOrder { .. } => SimulateCode::BlockNumberInvalid,
            E::TimestampOverflow | E::TimestampsOutOfOrder { .. } => SimulateCode::TimestampInvalid,
            E::BlockGasLimit { .. } => SimulateCode::BlockGasLimitExceeded,
            E::ChainId { .. } | E::NotAPrecompile(_) | E::AlreadyOverridden(_) => SimulateCode::Generic,
            E::MoveOntoItself(_) => SimulateCode::PrecompileSelfReference,
            E::MovedTogether { .. } => SimulateCode::PrecompileDuplicateAddress,
            E::Timeout { .. } => SimulateCode::Timeout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_call_reads_as_geth_words_it() {
        let reason = Box::new(InvalidTx::NonceTooLow { sender: Address::ZERO, tx: 0, state: 1 });
        let e = SimulateError::Refused { code: SimulateCode::NonceTooLow, reason, gas: 21000 };
        assert_eq!(
            e.to_string(),
            "err: nonce too low: address 0x0000000000000000000000000000000000000000, tx: 0 state: 1 (supplied gas 21000)"
        );
        assert_eq!(e.code(), SimulateCode::NonceTooLow);
        let e = SimulateError::ChainId { have: 1, want: 2 };
        assert_eq!(e.to_string(), "chainId does not match node's (have=1, want=2)");
    }
}

//! Why a transaction left the pool without being included, as preconf_transactionStatus
//! shows it: worded once, here.

use super::{Cause, InvalidTx};

#[derive(Debug, Clone, thiserror::Error)]
pub enum DropReason {
    /// The open block refused it (nonce, funds, ...), in geth's words: it can never
    /// execute as it is.
    #[error(transparent)]
    Invalid(InvalidTx),
    /// revm failed otherwise, as it says it.
    #[error("execution failed: {0}")]
    ExecutionFailed(Cause),
    #[error("replaced by a transaction with a higher fee")]
    Replaced,
    #[error("evicted: the pool was full and a better-paying transaction arrived")]
    Evicted,
    /// The test methods that take transactions out of the pool.
    #[error("dropped by anvil_dropTransaction")]
    DropTransaction,
    #[error("dropped by anvil_removePoolTransactions")]
    RemovePoolTransactions,
    #[error("dropped by anvil_dropAllTransactions")]
    DropAllTransactions,
    /// The state it was sent against is gone.
    #[error("dropped by evm_revert")]
    Revert,
    #[error("dropped by anvil_reset")]
    Reset,
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::Address;

    #[test]
    fn a_refusal_reads_as_geth_words_and_a_failure_names_itself() {
        let e = DropReason::Invalid(InvalidTx::NonceMax { sender: Address::ZERO });
        assert_eq!(e.to_string(), InvalidTx::NonceMax { sender: Address::ZERO }.to_string());
        let e = DropReason::ExecutionFailed(Cause::new(std::fmt::Error));
        assert_eq!(e.to_string(), "execution failed: an error occurred when formatting an argument");
    }
}

//! The Engine API's refusals, with the codes its specification gives them (-38001 …
//! -38005): op-node tells them apart by code, and the words are geth's.

/// Why payload attributes were refused (`Invalid payload attributes`, -38003).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttributesFault {
    #[error("missing withdrawals")]
    MissingWithdrawals,
    #[error("withdrawals before shanghai")]
    WithdrawalsBeforeShanghai,
    #[error("missing beacon root")]
    MissingBeaconRoot,
    #[error("unexpected beacon root")]
    UnexpectedBeaconRoot,
    #[error("gasLimit parameter is required")]
    MissingGasLimit,
    #[error("missing eip1559Params after holocene")]
    MissingEip1559Params,
    #[error("eip1559Params not supported prior to holocene upgrade")]
    Eip1559ParamsBeforeHolocene,
    #[error("invalid eip1559Params: a zero denominator with a non-zero elasticity")]
    InvalidEip1559Params,
    #[error("missing minBaseFee after jovian")]
    MissingMinBaseFee,
    #[error("minBaseFee not supported prior to jovian upgrade")]
    MinBaseFeeBeforeJovian,
    #[error("timestamp {timestamp} is not after the parent's {parent}")]
    Timestamp { timestamp: u64, parent: u64 },
    #[error("transaction {index}: {reason}")]
    Transaction { index: usize, reason: String },
    #[error("{0}")]
    Execution(String),
}

/// The fork a method version serves, for `Unsupported fork` (-38005).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkWindow {
    /// V1: before Canyon (Shanghai).
    Bedrock,
    /// V2: Bedrock through Canyon/Delta (Paris, Shanghai).
    Canyon,
    /// V3: Ecotone through Holocene (Cancun).
    Ecotone,
    /// V4: Isthmus on (Prague).
    Isthmus,
}

impl std::fmt::Display for ForkWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ForkWindow::Bedrock => "bedrock (paris)",
            ForkWindow::Canyon => "bedrock to delta (paris, shanghai)",
            ForkWindow::Ecotone => "ecotone to holocene (cancun)",
            ForkWindow::Isthmus => "isthmus (prague)",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// -38001: getPayload of an id the node does not have (never built, or dropped).
    #[error("Unknown payload")]
    UnknownPayload,
    /// -38002: safe or finalized not known, or not ancestors of the head.
    #[error("Invalid forkchoice state: {0}")]
    InvalidForkchoiceState(&'static str),
    /// -38003.
    #[error("Invalid payload attributes: {0}")]
    InvalidPayloadAttributes(#[from] AttributesFault),
    /// -38005: the method version does not serve the fork of the payload's timestamp.
    #[error("Unsupported fork: this method version serves {0} payloads")]
    UnsupportedFork(ForkWindow),
    /// -38004: more bodies asked for than one request may get.
    #[error("Too large request: {0} bodies, at most 1024")]
    TooLargeRequest(u64),
    /// -32602: a member a method version does not take (withdrawals in V1, ...).
    #[error("invalid params: {0}")]
    InvalidParams(&'static str),
    /// The Engine API drives OP Stack chains only.
    #[error("the Engine API serves OP Stack chains only")]
    NotAnOpChain,
    /// Sequencer mode (`noTxPool: false`) needs this node's builder on the head op-node names.
    #[error("cannot sequence: {0}")]
    NotSequencing(&'static str),
}

//! Which method version serves which fork, and what payload attributes must carry on an
//! OP chain (the Engine API's Shanghai/Cancun/Prague rules with OP's forks in their
//! places, and op-geth's checks of the OP members).

use alloy_consensus::Header;
use preconf_op::{OpConfig, OpSpecId};

use super::types::{PayloadAttributes, Version};
use crate::error::{AttributesFault, ChainResult, EngineError, ForkWindow};

/// The members a method version does not take, before anything is looked up.
pub fn check_attributes_version(version: Version, a: &PayloadAttributes) -> ChainResult<()> {
    match version {
        Version::V1 if a.withdrawals.is_some() => {
            Err(EngineError::InvalidParams("withdrawals not supported in V1").into())
        }
        Version::V1 if a.parent_beacon_block_root.is_some() => {
            Err(EngineError::InvalidParams("parentBeaconBlockRoot not supported in V1").into())
        }
        _ => Ok(()),
    }
}

/// The fork window of a payload with this timestamp.
fn window(op: &OpConfig, timestamp: u64) -> ForkWindow {
    if op.is_active(OpSpecId::ISTHMUS, timestamp) {
        ForkWindow::Isthmus
    } else if op.is_active(OpSpecId::ECOTONE, timestamp) {
        ForkWindow::Ecotone
    } else if op.is_active(OpSpecId::CANYON, timestamp) {
        ForkWindow::Canyon
    } else {
        ForkWindow::Bedrock
    }
}

/// Whether `version` of forkchoiceUpdated/getPayload/newPayload serves a payload of
/// `window`: V1 Paris only, V2 Paris and Shanghai, V3 Cancun (forkchoiceUpdatedV3 also
/// Prague: there is no V4 of it), V4 Prague.
fn serves(version: Version, window: ForkWindow, forkchoice: bool) -> Option<ForkWindow> {
    use ForkWindow::*;
    let ok = match version {
        Version::V1 => window == Bedrock,
        Version::V2 => matches!(window, Bedrock | Canyon),
        Version::V3 => window == Ecotone || (forkchoice && window == Isthmus),
        Version::V4 => window == Isthmus,
    };
    match (ok, version) {
        (true, _) => None,
        (false, Version::V1) => Some(Bedrock),
        (false, Version::V2) => Some(Canyon),
        (false, Version::V3) => Some(Ecotone),
        (false, Version::V4) => Some(Isthmus),
    }
}

pub fn check_payload_version(op: &OpConfig, version: Version, timestamp: u64) -> ChainResult<()> {
    match serves(version, window(op, timestamp), false) {
        None => Ok(()),
        Some(w) => Err(EngineError::UnsupportedFork(w).into()),
    }
}

/// The attributes against the fork of their timestamp and the parent.
pub fn check_attributes(op: &OpConfig, version: Version, parent: &Header, a: &PayloadAttributes) -> ChainResult<()> {
    let fault = |f: AttributesFault| -> ChainResult<()> { Err(EngineError::InvalidPayloadAttributes(f).into()) };
    let t = a.timestamp;
    if version == Version::V2 && a.parent_beacon_block_root.is_some() {
        return fault(AttributesFault::UnexpectedBeaconRoot);
    }
    if version >= Version::V3 {
        if a.withdrawals.is_none() {
            return fault(AttributesFault::MissingWithdrawals);
        }
        if a.parent_beacon_block_root.is_none() {
            return fault(AttributesFault::MissingBeaconRoot);
        }
    }
    if let Some(w) = serves(version, window(op, t), true) {
        return Err(EngineError::UnsupportedFork(w).into());
    }
    match (op.is_active(OpSpecId::CANYON, t), a.withdrawals.is_some()) {
        (true, false) => return fault(AttributesFault::MissingWithdrawals),
        (false, true) => return fault(AttributesFault::WithdrawalsBeforeShanghai),
        _ => {}
    }
    if a.gas_limit.is_none() {
        return fault(AttributesFault::MissingGasLimit);
    }
    match (op.is_active(OpSpecId::HOLOCENE, t), a.eip1559_params) {
        (true, None) => return fault(AttributesFault::MissingEip1559Params),
        (false, Some(_)) => return fault(AttributesFault::Eip1559ParamsBeforeHolocene),
        (true, Some(p)) => {
            let denominator = u32::from_be_bytes(p[..4].try_into().expect("4 bytes"));
            let elasticity = u32::from_be_bytes(p[4..].try_into().expect("4 bytes"));
            if denominator == 0 && elasticity != 0 {
                return fault(AttributesFault::InvalidEip1559Params);
            }
        }
        (false, None) => {}
    }
    match (op.is_active(OpSpecId::JOVIAN, t), a.min_base_fee.is_some()) {
        (true, false) => return fault(AttributesFault::MissingMinBaseFee),
        (false, true) => return fault(AttributesFault::MinBaseFeeBeforeJovian),
        _ => {}
    }
    if t <= parent.timestamp {
        return fault(AttributesFault::Timestamp { timestamp: t, parent: parent.timestamp });
    }
    Ok(())
}

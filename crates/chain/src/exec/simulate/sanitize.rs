//! The shape of a simulation before anything runs: client limits, and the sequence of
//! blocks (numbers, timestamps, gap fillers), as geth's `sanitizeChain` builds it.

use crate::error::{ChainError, ChainResult, SimulateError};

/// Client limits of one request (NodeConfig `simulate_*`).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Simulated blocks, counting the empty blocks that fill gaps.
    pub max_blocks: usize,
    pub max_calls_per_block: usize,
    pub max_calls: usize,
}

/// One block to simulate, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedBlock {
    pub number: u64,
    pub timestamp: u64,
    /// Index of the requested block state call; `None` for a block that fills a gap.
    pub request: Option<usize>,
}

/// What a requested block asks for: its number and time overrides, and how many calls.
#[derive(Clone, Copy, Debug, Default)]
pub struct Requested {
    pub number: Option<u64>,
    pub time: Option<u64>,
    pub calls: usize,
}

/// Refuses requests with too many calls, per block or in total.
pub fn check_calls(requested: &[Requested], limits: &Limits) -> ChainResult<()> {
    let mut total = 0usize;
    for r in requested {
        if r.calls > limits.max_calls_per_block {
            return Err(SimulateError::TooManyCallsInBlock { calls: r.calls, max: limits.max_calls_per_block }.into());
        }
        total += r.calls;
    }
    if total > limits.max_calls {
        return Err(SimulateError::TooManyCalls { total, max: limits.max_calls }.into());
    }
    Ok(())
}

/// The seconds a block without `time` adds to its parent's: the chain's block time,
/// rounded up to whole seconds, at least one (timestamps must increase).
pub fn block_time_secs(block_time_ms: u64) -> u64 {
    block_time_ms.div_ceil(1000).max(1)
}

/// Numbers and timestamps of every simulated block after `parent` (number, timestamp).
/// A block without `number` follows its predecessor; a gap between given numbers is filled
/// with empty blocks; a block without `time` is `step` seconds after its predecessor.
pub fn plan_blocks(
    parent: (u64, u64),
    requested: &[Requested],
    step: u64,
    max_blocks: usize,
) -> ChainResult<Vec<PlannedBlock>> {
    let (base_number, mut prev_time) = parent;
    let mut prev_number = base_number;
    let mut plan = Vec::with_capacity(requested.len());
    let next_time = |t: u64| t.checked_add(step).ok_or(ChainError::Simulate(SimulateError::TimestampOverflow));
    for (i, r) in requested.iter().enumerate() {
        let number = match r.number {
            Some(n) => n,
            None => prev_number.checked_add(1).ok_or(SimulateError::NumberOverflow)?,
        };
        if number <= prev_number {
            return Err(SimulateError::NumbersOutOfOrder { number, previous: prev_number }.into());
        }
        if number - base_number > max_blocks as u64 {
            return Err(SimulateError::TooManyBlocks { max: max_blocks, base: base_number }.into());
        }
        for gap in prev_number + 1..number {
            prev_time = next_time(prev_time)?;
            plan.push(PlannedBlock { number: gap, timestamp: prev_time, request: None });
        }
        let timestamp = match r.time {
            Some(t) if t <= prev_time => {
                return Err(SimulateError::TimestampsOutOfOrder { timestamp: t, previous: prev_time }.into())
            }
            Some(t) => t,
            None => next_time(prev_time)?,
        };
        plan.push(PlannedBlock { number, timestamp, request: Some(i) });
        prev_number = number;
        prev_time = timestamp;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SimulateCode;

    fn req(number: Option<u64>, time: Option<u64>) -> Requested {
        Requested { number, time, calls: 0 }
    }

    fn kind(e: ChainError) -> SimulateCode {
        match e {
            ChainError::Simulate(e) => e.code(),
            other => panic!("expected a simulate error, got {other:?}"),
        }
    }

    #[test]
    fn blocks_without_overrides_follow_the_parent() {
        let plan = plan_blocks((10, 100), &[req(None, None), req(None, None)], 2, 256).unwrap();
        assert_eq!(
            plan,
            vec![
                PlannedBlock { number: 11, timestamp: 102, request: Some(0) },
                PlannedBlock { number: 12, timestamp: 104, request: Some(1) },
            ]
        );
    }

    #[test]
    fn gaps_are_filled_with_empty_blocks() {
        let plan =
            plan_blocks((10, 100), &[req(Some(11), None), req(Some(14), Some(200)), req(None, None)], 12, 256).unwrap();
        let shape: Vec<_> = plan.iter().map(|b| (b.number, b.timestamp, b.request)).collect();
        assert_eq!(
            shape,
            vec![(11, 112, Some(0)), (12, 124, None), (13, 136, None), (14, 200, Some(1)), (15, 212, Some(2))]
        );
    }

    #[test]
    fn numbers_must_increase() {
        let e = plan_blocks((10, 100), &[req(Some(12), None), req(Some(12), None)], 1, 256).unwrap_err();
        assert_eq!(kind(e), SimulateCode::BlockNumberInvalid);
        let e = plan_blocks((10, 100), &[req(Some(10), None)], 1, 256).unwrap_err();
        assert_eq!(kind(e.clone()), SimulateCode::BlockNumberInvalid);
        assert_eq!(e.to_string(), "block numbers must be in order: 10 <= 10");
    }

    #[test]
    fn timestamps_must_increase_including_after_gap_fillers() {
        let e = plan_blocks((10, 100), &[req(None, Some(100))], 1, 256).unwrap_err();
        assert_eq!(kind(e), SimulateCode::TimestampInvalid);
        // Two fillers at 101 and 102 come before block 13, so time 102 is not after its parent.
        let e = plan_blocks((10, 100), &[req(Some(13), Some(102))], 1, 256).unwrap_err();
        assert_eq!(e.to_string(), "block timestamps must be in order: 102 <= 102");
        assert!(plan_blocks((10, 100), &[req(Some(13), Some(103))], 1, 256).is_ok());
        let e = plan_blocks((10, u64::MAX), &[req(None, None)], 1, 256).unwrap_err();
        assert_eq!(kind(e), SimulateCode::TimestampInvalid);
    }

    #[test]
    fn the_block_limit_counts_gap_fillers() {
        assert_eq!(plan_blocks((10, 0), &[req(Some(266), None)], 1, 256).unwrap().len(), 256);
        let e = plan_blocks((10, 0), &[req(Some(267), None)], 1, 256).unwrap_err();
        assert_eq!(kind(e), SimulateCode::ClientLimitExceeded);
        let many: Vec<_> = (0..4).map(|_| req(None, None)).collect();
        assert_eq!(kind(plan_blocks((10, 0), &many, 1, 3).unwrap_err()), SimulateCode::ClientLimitExceeded);
    }

    #[test]
    fn call_limits_per_block_and_in_total() {
        let limits = Limits { max_blocks: 256, max_calls_per_block: 2, max_calls: 3 };
        let blocks =
            |counts: &[usize]| counts.iter().map(|&c| Requested { calls: c, ..Default::default() }).collect::<Vec<_>>();
        assert!(check_calls(&blocks(&[2, 1]), &limits).is_ok());
        assert_eq!(kind(check_calls(&blocks(&[3]), &limits).unwrap_err()), SimulateCode::ClientLimitExceeded);
        assert_eq!(kind(check_calls(&blocks(&[2, 2]), &limits).unwrap_err()), SimulateCode::ClientLimitExceeded);
    }

    #[test]
    fn block_time_rounds_up_to_whole_seconds() {
        assert_eq!(block_time_secs(2000), 2);
        assert_eq!(block_time_secs(2500), 3);
        assert_eq!(block_time_secs(200), 1);
        assert_eq!(block_time_secs(0), 1);
    }
}

//! The bounds of a trace, kept by an inspector that runs beside the tracer: a wall-clock
//! deadline and a budget for the output the tracer is building. Either one stops the EVM
//! at once (a fatal halt plus a context error, so the transaction ends with an error
//! instead of a partial trace).

use std::time::{Duration, Instant};

use alloy_primitives::map::{AddressMap, HashSet};
use alloy_primitives::{Address, Log, U256};
use revm::bytecode::opcode::{SLOAD, SSTORE};
use revm::context_interface::{ContextError, ContextTr};
use revm::inspector::Inspector;
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::interpreter_types::{InputsTr, Jumps, MemoryTr, ReturnData};
use revm::interpreter::{CallInputs, CallOutcome, CreateInputs, CreateOutcome, Interpreter};

/// How many instructions run between two looks at the clock.
const CLOCK_EVERY: u32 = 1024;

/// Rough JSON sizes of what the tracers emit, for the output budget. They overestimate
/// (the rendered trace is checked against the same budget once it exists): the point is
/// to stop a runaway trace long before it holds gigabytes in memory.
const STEP_BYTES: usize = 128;
const WORD_BYTES: usize = 70;
const FRAME_BYTES: usize = 320;
const LOG_BYTES: usize = 160;
/// One `"0x…": "0x…"` storage entry.
const SLOT_BYTES: usize = 140;

/// Which parts of each instruction the struct logger records (nothing for other tracers).
#[derive(Clone, Copy, Debug, Default)]
pub struct StepCapture {
    pub steps: bool,
    pub stack: bool,
    pub memory: bool,
    pub return_data: bool,
    /// SLOAD and SSTORE entries carry every slot of the contract touched so far.
    pub storage: bool,
    /// geth's `limit`: struct logs past this many are not recorded.
    pub limit: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exceeded {
    Timeout,
    Output,
}

/// Message the EVM error carries when the guard stopped it (the guard's own flag decides
/// what the caller reports).
const STOPPED: &str = "trace stopped by its bounds";

#[derive(Debug)]
pub struct TraceGuard {
    deadline: Instant,
    pub timeout: Duration,
    pub max_bytes: usize,
    capture: StepCapture,
    steps: u32,
    /// Struct logs recorded so far (for `limit`).
    logged: u64,
    /// Estimated output so far, across every transaction of the request.
    bytes: usize,
    /// Slots seen per contract, for the size of the storage snapshots (`storage`).
    slots: AddressMap<HashSet<U256>>,
    pub exceeded: Option<Exceeded>,
}

impl TraceGuard {
    /// geth's `limit` of the struct logger, when one was asked for.
    pub fn step_limit(&self) -> Option<u64> {
        self.capture.limit
    }

    pub fn new(timeout: Duration, max_bytes: usize, capture: StepCapture) -> Self {
        Self {
            deadline: Instant::now() + timeout,
            timeout,
            max_bytes,
            capture,
            steps: 0,
            logged: 0,
            bytes: 0,
            slots: AddressMap::default(),
            exceeded: None,
        }
    }

    /// Between transactions: the deadline holds for the whole request.
    pub fn check_clock(&mut self) -> Option<Exceeded> {
        if self.exceeded.is_none() && Instant::now() >= self.deadline {
            self.exceeded = Some(Exceeded::Timeout);
        }
        self.exceeded
    }

    /// Before each traced transaction: `limit` counts per transaction.
    pub fn next_transaction(&mut self) {
        self.logged = 0;
        self.slots.clear();
    }

    fn add(&mut self, bytes: usize) {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.max_bytes && self.exceeded.is_none() {
            self.exceeded = Some(Exceeded::Output);
        }
    }

    fn stop<CTX: ContextTr>(&self, context: &mut CTX) {
        if context.error().is_ok() {
            *context.error() = Err(ContextError::Custom(STOPPED.into()));
        }
    }
}

impl<CTX: ContextTr> Inspector<CTX, EthInterpreter> for TraceGuard {
    fn step(&mut self, interp: &mut Interpreter<EthInterpreter>, context: &mut CTX) {
        if self.exceeded.is_none() {
            self.steps = self.steps.wrapping_add(1);
            if self.steps.is_multiple_of(CLOCK_EVERY) {
                self.check_clock();
            }
            let c = self.capture;
            if c.steps && c.limit.is_none_or(|l| self.logged < l) {
                self.logged += 1;
                let mut bytes = STEP_BYTES;
                if c.stack {
                    bytes += interp.stack.len() * WORD_BYTES;
                }
                if c.memory {
                    bytes += interp.memory.size() * 2 + interp.memory.size() / 32 * 4;
                }
                if c.return_data {
                    bytes += interp.return_data.buffer().len() * 2;
                }
                let op = interp.bytecode.opcode();
                if c.storage && (op == SLOAD || op == SSTORE) {
                    if let Ok(slot) = interp.stack.peek(0) {
                        let seen = self.slots.entry(interp.input.target_address()).or_default();
                        seen.insert(slot);
                        bytes += seen.len() * SLOT_BYTES;
                    }
                }
                self.add(bytes);
            }
        }
        if self.exceeded.is_some() {
            self.stop(context);
            interp.halt_fatal();
        }
    }

    fn call(&mut self, _context: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        self.add(FRAME_BYTES + inputs.input.len() * 2);
        None
    }

    fn call_end(&mut self, _context: &mut CTX, _inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.add(outcome.result.output.len() * 2);
    }

    fn create(&mut self, _context: &mut CTX, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        self.add(FRAME_BYTES + inputs.init_code().len() * 2);
        None
    }

    fn log(&mut self, _context: &mut CTX, log: Log) {
        self.add(LOG_BYTES + log.topics().len() * WORD_BYTES + log.data.data.len() * 2);
    }

    fn selfdestruct(&mut self, _contract: Address, _target: Address, _value: U256) {
        self.add(FRAME_BYTES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_budget_is_cumulative() {
        let mut g = TraceGuard::new(Duration::from_secs(5), 1000, StepCapture::default());
        g.add(600);
        assert_eq!(g.exceeded, None);
        g.add(600);
        assert_eq!(g.exceeded, Some(Exceeded::Output));
    }

    #[test]
    fn clock_runs_for_the_whole_request() {
        let mut g = TraceGuard::new(Duration::ZERO, usize::MAX, StepCapture::default());
        assert_eq!(g.check_clock(), Some(Exceeded::Timeout));
    }
}

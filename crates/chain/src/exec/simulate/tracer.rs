//! Logs of a simulated call in execution order, optionally with every ETH value transfer
//! as an ERC-20 `Transfer` log from 0xEeee…EEeE (`traceTransfers`), and the wall-clock
//! deadline of the request.

use std::time::Instant;

use alloy_primitives::{address, b256, Address, Log, LogData, B256, U256};
use revm::inspector::Inspector;
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::{
    CallInputs, CallOutcome, CallScheme, CreateInputs, CreateOutcome, InstructionResult, Interpreter,
};

/// The pseudo-token address geth (and the execution-apis spec) use for ETH transfers.
pub const TRANSFER_ADDRESS: Address = address!("0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE");
/// keccak256("Transfer(address,address,uint256)")
pub const TRANSFER_TOPIC: B256 = b256!("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");

/// How many instructions run between two looks at the clock.
const CLOCK_EVERY: u32 = 4096;

/// What a transaction logged: the logs its successful frames kept, and for geth's
/// numbering (`--profile geth`) each one's position among every log the transaction
/// captured, those of failed frames included, and how many that was.
pub struct TracedLogs {
    pub logs: Vec<Log>,
    pub ordinals: Vec<u64>,
    pub captured: u64,
}

pub struct SimTracer {
    trace_transfers: bool,
    deadline: Instant,
    steps: u32,
    /// Set once the deadline passed: every frame then halts at its next instruction.
    pub timed_out: bool,
    logs: Vec<Log>,
    /// For each kept log, how many logs the transaction had captured before it, dropped
    /// ones included (geth numbers simulated logs that way, see `TracedLogs`).
    ordinals: Vec<u64>,
    /// Logs captured by the transaction so far, including those of failed frames.
    captured: u64,
    /// `logs.len()` when each open frame started: a frame that fails drops what it logged.
    frames: Vec<usize>,
    /// Per open CREATE frame, the transfer log whose recipient is only known at its end.
    creates: Vec<Option<usize>>,
}

impl SimTracer {
    pub fn new(trace_transfers: bool, deadline: Instant) -> Self {
        Self {
            trace_transfers,
            deadline,
            steps: 0,
            timed_out: false,
            logs: Vec::new(),
            ordinals: Vec::new(),
            captured: 0,
            frames: Vec::new(),
            creates: Vec::new(),
        }
    }

    /// The logs of the transaction that just ran; the tracer is ready for the next one.
    pub fn take_logs(&mut self) -> TracedLogs {
        self.frames.clear();
        self.creates.clear();
        TracedLogs {
            logs: std::mem::take(&mut self.logs),
            ordinals: std::mem::take(&mut self.ordinals),
            captured: std::mem::take(&mut self.captured),
        }
    }

    fn push(&mut self, log: Log) {
        self.logs.push(log);
        self.ordinals.push(self.captured);
        self.captured += 1;
    }

    fn transfer(&mut self, from: Address, to: Address, value: U256) -> Option<usize> {
        if !self.trace_transfers || value.is_zero() {
            return None;
        }
        let topics = vec![TRANSFER_TOPIC, from.into_word(), to.into_word()];
        let data = LogData::new_unchecked(topics, B256::from(value).0.to_vec().into());
        self.push(Log { address: TRANSFER_ADDRESS, data });
        Some(self.logs.len() - 1)
    }

    fn frame_end(&mut self, ok: bool) {
        let start = self.frames.pop().unwrap_or(0);
        if !ok {
            self.logs.truncate(start);
            self.ordinals.truncate(start);
        }
    }
}

impl<CTX> Inspector<CTX, EthInterpreter> for SimTracer {
    fn step(&mut self, interp: &mut Interpreter<EthInterpreter>, _context: &mut CTX) {
        if self.timed_out {
            interp.halt(InstructionResult::OutOfGas);
            return;
        }
        self.steps = self.steps.wrapping_add(1);
        if self.steps.is_multiple_of(CLOCK_EVERY) && Instant::now() >= self.deadline {
            self.timed_out = true;
            interp.halt(InstructionResult::OutOfGas);
        }
    }

    fn log(&mut self, _context: &mut CTX, log: Log) {
        self.push(log);
    }

    fn call(&mut self, _context: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        self.frames.push(self.logs.len());
        // DELEGATECALL moves nothing; CALLCODE keeps the value in the caller.
        if inputs.scheme != CallScheme::CallCode {
            if let Some(value) = inputs.transfer_value() {
                self.transfer(inputs.caller, inputs.target_address, value);
            }
        }
        None
    }

    fn call_end(&mut self, _context: &mut CTX, _inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.frame_end(outcome.result.is_ok());
    }

    fn create(&mut self, _context: &mut CTX, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        self.frames.push(self.logs.len());
        let slot = self.transfer(inputs.caller(), Address::ZERO, inputs.value());
        self.creates.push(slot);
        None
    }

    fn create_end(&mut self, _context: &mut CTX, _inputs: &CreateInputs, outcome: &mut CreateOutcome) {
        let slot = self.creates.pop().flatten();
        if let (Some(i), Some(created)) = (slot, outcome.address) {
            if let Some(log) = self.logs.get_mut(i) {
                let mut topics = log.data.topics().to_vec();
                topics[2] = created.into_word();
                log.data = LogData::new_unchecked(topics, log.data.data.clone());
            }
        }
        self.frame_end(outcome.result.is_ok());
    }

    fn selfdestruct(&mut self, contract: Address, target: Address, value: U256) {
        self.transfer(contract, target, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_frames_drop_their_logs_but_keep_their_numbers() {
        let mut t = SimTracer::new(true, Instant::now());
        let (a, b) = (Address::repeat_byte(1), Address::repeat_byte(2));
        t.frames.push(t.logs.len());
        t.transfer(a, b, U256::from(1));
        t.frame_end(false);
        t.transfer(b, a, U256::from(2));
        let traced = t.take_logs();
        assert_eq!(traced.logs.len(), 1);
        assert_eq!((traced.ordinals, traced.captured), (vec![1], 2));
    }

    #[test]
    fn transfer_logs_are_erc20_transfers() {
        let mut t = SimTracer::new(true, Instant::now());
        let from = Address::repeat_byte(0xc0);
        let to = Address::repeat_byte(0xc1);
        t.transfer(from, to, U256::from(1000));
        t.transfer(from, to, U256::ZERO);
        let traced = t.take_logs();
        assert_eq!((traced.ordinals.as_slice(), traced.captured), (&[0u64][..], 1));
        let logs = traced.logs;
        assert_eq!(logs.len(), 1);
        assert_eq!(logs[0].address, TRANSFER_ADDRESS);
        assert_eq!(logs[0].topics(), &[TRANSFER_TOPIC, from.into_word(), to.into_word()]);
        assert_eq!(U256::from_be_slice(&logs[0].data.data), U256::from(1000));
        assert_eq!(alloy_primitives::keccak256("Transfer(address,address,uint256)"), TRANSFER_TOPIC);
    }

    #[test]
    fn without_trace_transfers_nothing_is_synthesised() {
        let mut t = SimTracer::new(false, Instant::now());
        assert!(t.transfer(Address::ZERO, Address::ZERO, U256::from(1)).is_none());
        assert!(t.take_logs().logs.is_empty());
    }
}

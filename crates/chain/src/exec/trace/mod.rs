//! debug_traceCall, debug_traceTransaction and debug_traceBlock*: geth's tracers as
//! revm-inspectors implements them (`DebugInspector`: the struct logger, callTracer,
//! prestateTracer, 4byteTracer, noopTracer) on an EVM made by `exec::evm_context`, like
//! every other execution here. A guard inspector runs beside the tracer and keeps the
//! request's bounds (wall clock, output size). A block's transactions are replayed on its
//! parent state after its pre-block system calls, untraced up to the first one asked for.

pub mod guard;
pub mod session;

use std::time::Duration;

use alloy_primitives::KECCAK256_EMPTY;
use alloy_rpc_types_trace::geth::{
    GethDebugBuiltInTracerType as BuiltIn, GethDebugTracerType, GethDebugTracingOptions, GethTrace, PreStateFrame,
};
use revm_inspectors::tracing::DebugInspector;

use crate::error::{ChainError, ChainResult, InvalidParam, Limit};
use guard::{Exceeded, StepCapture, TraceGuard};

/// A tracer's options, as geth takes them; the timeout already parsed by the edge.
#[derive(Clone, Debug, Default)]
pub struct TraceOptions {
    pub tracing: GethDebugTracingOptions,
    /// `None`: the node's default (5 s, as geth).
    pub timeout: Option<Duration>,
}

/// The node's bounds on traces.
#[derive(Clone, Copy, Debug)]
pub struct TraceLimits {
    pub default_timeout: Duration,
    pub max_timeout: Duration,
    /// Largest trace output (JSON bytes) a request may produce.
    pub max_bytes: usize,
}

/// The tracers this node serves, by geth's names.
pub const TRACERS: [&str; 4] = ["callTracer", "prestateTracer", "4byteTracer", "noopTracer"];

/// The tracer an options object asks for, and the guard that bounds it.
pub fn inspectors(opts: &TraceOptions, limits: &TraceLimits) -> ChainResult<(TraceGuard, DebugInspector)> {
    let timeout = opts.timeout.unwrap_or(limits.default_timeout.min(limits.max_timeout));
    if timeout > limits.max_timeout {
        return Err(
            InvalidParam::TraceTimeout { asked: timeout.as_millis(), max: limits.max_timeout.as_millis() }.into()
        );
    }
    let tracing = &opts.tracing;
    let capture = match &tracing.tracer {
        None => struct_logger(tracing),
        Some(t) if t.as_str().is_empty() => struct_logger(tracing),
        Some(GethDebugTracerType::BuiltInTracer(
            BuiltIn::CallTracer | BuiltIn::PreStateTracer | BuiltIn::FourByteTracer | BuiltIn::NoopTracer,
        )) => StepCapture::default(),
        Some(other) => {
            let (list, name) = (TRACERS.join(", "), other.as_str().to_string());
            return Err(match other {
                GethDebugTracerType::JsTracer(_) => InvalidParam::JsTracer { name, list },
                _ => InvalidParam::TracerNotSupported { name, list },
            }
            .into());
        }
    };
    let tracer = DebugInspector::new(tracing.clone())
        .map_err(|e| InvalidParam::TracerConfig { tracer: tracer_name(tracing).to_string(), reason: e.to_string() })?;
    Ok((TraceGuard::new(timeout, limits.max_bytes, capture), tracer))
}

fn struct_logger(tracing: &GethDebugTracingOptions) -> StepCapture {
    let c = &tracing.config;
    StepCapture {
        steps: true,
        stack: c.is_stack_enabled(),
        memory: c.is_memory_enabled(),
        return_data: c.is_return_data_enabled(),
        storage: c.is_storage_enabled(),
        limit: c.limit.filter(|l| *l != 0),
    }
}

fn tracer_name(tracing: &GethDebugTracingOptions) -> &str {
    tracing.tracer.as_ref().map_or("the struct logger", |t| t.as_str())
}

/// The error a trace that went past its bounds ends with.
pub fn bounds_error(exceeded: Exceeded, guard: &TraceGuard) -> ChainError {
    match exceeded {
        // geth's words for a trace stopped by its timeout.
        Exceeded::Timeout => ChainError::Timeout { ms: guard.timeout.as_millis() },
        Exceeded::Output => output_too_large(guard.max_bytes),
    }
}

pub fn output_too_large(max_bytes: usize) -> ChainError {
    ChainError::LimitExceeded(Limit::TraceOutput(max_bytes))
}

/// What geth answers that revm-inspectors 0.39 (the release on revm 38) leaves to the
/// caller: the struct logger stops recording at `limit`, and the prestate tracer omits
/// accounts that were empty before the transaction (even when fees fund them).
pub fn geth_shape<DB: revm::DatabaseRef<Error = ChainError>>(
    trace: GethTrace,
    limit: Option<u64>,
    db: &DB,
) -> ChainResult<GethTrace> {
    Ok(match trace {
        GethTrace::Default(mut frame) => {
            if let Some(limit) = limit {
                frame.struct_logs.truncate(limit as usize);
            }
            GethTrace::Default(frame)
        }
        GethTrace::PreStateTracer(PreStateFrame::Default(mut mode)) => {
            let mut kept = std::collections::BTreeMap::new();
            for (address, account) in std::mem::take(&mut mode.0) {
                let before = db.basic_ref(address)?.unwrap_or_default();
                let empty = before.balance.is_zero() && before.nonce == 0 && before.code_hash == KECCAK256_EMPTY;
                if !empty {
                    kept.insert(address, account);
                }
            }
            mode.0 = kept;
            GethTrace::PreStateTracer(PreStateFrame::Default(mode))
        }
        other => other,
    })
}

//! debug_traceCall, debug_traceTransaction, debug_traceBlockByNumber/ByHash on the trace
//! work pool (they run for up to their timeout and build large outputs), and
//! eth_createAccessList on the calls pool (a few gas-capped calls, like eth_estimateGas).

use preconf_rpc::params;
use preconf_rpc::render::trace;

use crate::work::Class;
use crate::NativeNode;

work_methods! {
    fn trace_call(request: String) per client on Class::Trace => |n| {
        let p: params::TraceCallParams = params::json(&request, "trace call request")?;
        let (tx, block, options) = p.call_options()?;
        let tracing = &n.api().tracing;
        trace::trace(tracing.trace_call(&tx, params::block(&block)?, &options)?, tracing.max_bytes())
    };

    fn trace_transaction(request: String) per client on Class::Trace => |n| {
        let p: params::TraceTransactionParams = params::json(&request, "trace request")?;
        let tracing = &n.api().tracing;
        let hash = params::hash(&p.hash)?;
        let out = tracing
            .trace_transaction(hash, &p.options.into_options())
            .map_err(|e| crate::history::trace_failure(n, hash, e))?;
        trace::trace(out, tracing.max_bytes())
    };

    #[doc = " debug_traceBlockByNumber and debug_traceBlockByHash (`block` is a canonical selector)."]
    fn trace_block(request: String) per client on Class::Trace => |n| {
        let p: params::TraceBlockParams = params::json(&request, "trace request")?;
        let tracing = &n.api().tracing;
        let block = params::block(&p.block)?;
        crate::history::check_traceable(n, block)?;
        let out = tracing.trace_block(block, &p.options.into_options())?;
        trace::block_traces(out, tracing.max_bytes())
    };

    fn create_access_list(request: String) per client on Class::Calls, then Class::Upstream => |n| {
        let p: params::AccessListParams = params::json(&request, "access list request")?;
        let out =
            n.api().tracing.create_access_list(&p.tx, params::block(&p.block)?, p.state_overrides.as_ref())?;
        Ok(trace::access_list(&out))
    };
}

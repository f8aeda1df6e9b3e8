//! debug_traceCall, debug_traceTransaction, debug_traceBlockByNumber/ByHash on the trace
//! work pool (they run for up to their timeout and build large outputs), and
//! eth_createAccessList on the calls pool (a few gas-capped calls, like eth_estimateGas).

use napi::bindgen_prelude::{Either, PromiseRaw};
use napi::Env;
use napi_derive::napi;
use preconf_rpc::params;
use preconf_rpc::render::trace;

use crate::failure::NativeFailure;
use crate::work::Class;
use crate::NativeNode;

#[napi]
impl NativeNode {
    #[napi]
    pub fn trace_call<'env>(
        &self,
        env: &'env Env,
        request: String,
        client: Option<u32>,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.spawn_for(env, Class::Trace, client, move |n| {
            let p: params::TraceCallParams = params::json(&request, "trace call request")?;
            let (tx, block, options) = p.call_options()?;
            let tracing = &n.api().tracing;
            trace::trace(tracing.trace_call(&tx, params::block(&block)?, &options)?, tracing.max_bytes())
        })
    }

    #[napi]
    pub fn trace_transaction<'env>(
        &self,
        env: &'env Env,
        request: String,
        client: Option<u32>,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.spawn_for(env, Class::Trace, client, move |n| {
            let p: params::TraceTransactionParams = params::json(&request, "trace request")?;
            let tracing = &n.api().tracing;
            let out = tracing.trace_transaction(params::hash(&p.hash)?, &p.options.into_options())?;
            trace::trace(out, tracing.max_bytes())
        })
    }

    /// debug_traceBlockByNumber and debug_traceBlockByHash (`block` is a canonical selector).
    #[napi]
    pub fn trace_block<'env>(
        &self,
        env: &'env Env,
        request: String,
        client: Option<u32>,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.spawn_for(env, Class::Trace, client, move |n| {
            let p: params::TraceBlockParams = params::json(&request, "trace request")?;
            let tracing = &n.api().tracing;
            let out = tracing.trace_block(params::block(&p.block)?, &p.options.into_options())?;
            trace::block_traces(out, tracing.max_bytes())
        })
    }

    #[napi]
    pub fn create_access_list<'env>(
        &self,
        env: &'env Env,
        request: String,
        client: Option<u32>,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.spawn_for(env, Class::Calls, client, move |n| {
            let p: params::AccessListParams = params::json(&request, "access list request")?;
            let out =
                n.api().tracing.create_access_list(&p.tx, params::block(&p.block)?, p.state_overrides.as_ref())?;
            Ok(trace::access_list(&out))
        })
    }
}

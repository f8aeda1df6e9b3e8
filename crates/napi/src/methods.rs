//! The one shape of a method whose work runs off the event loop: it takes the request's
//! strings (and, for work served per client, the transport's `client` key), runs on a thread
//! of its cost class, and resolves a promise with the JSON text or a typed failure
//! (`Promise<string | NativeFailure>` in the generated TypeScript).
//!
//! ```ignore
//! work_methods! {
//!     #[doc = " What it answers (lands in native.d.ts)."]
//!     fn name(arg: String, other: Option<String>) per client on Class::Calls => |n| body;
//!     fn dev_thing(arg: String) on Class::Submit, with dev => |d| body;
//!     fn call_like(arg: String) per client on Class::Calls, then Class::Upstream => |n| body;
//! }
//! ```
//!
//! Docs are written `#[doc = "…"]`: a `///` comment passed through a macro reaches napi's
//! type generator as a raw string, which it would print with its `r"`.
//!
//! `per client` adds the last argument `client: Option<u32>`, whose turn the work takes;
//! `with f` hands the body `f(node)?` (the dev methods' `DevApi`) instead of the node.
//! `then C` is for work that may meet a forked chain's upstream (a call, an estimate): it
//! runs first on `class` without waiting for the upstream, and when it would have to, again
//! from the start on a thread of `C` (`work::run_or_defer`); its body must be `Fn`. Each
//! invocation is one `#[napi] impl NativeNode` block (`NativeNode` as the invoking file
//! imports it), so the bodies stay in the files of their concern.

macro_rules! work_methods {
    ($(
        $(#[doc = $doc:literal])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(per $client:ident)? on $class:expr
            $(, with $with:path)? $(, then $then:expr)? => |$n:ident| $body:expr;
    )*) => {
        #[napi_derive::napi]
        impl NativeNode {
            $(
                $(#[doc = $doc])*
                #[napi]
                pub fn $name<'env>(
                    &self,
                    env: &'env napi::Env,
                    $($arg: $ty,)*
                    $($client: Option<u32>,)?
                ) -> napi::Result<
                    napi::bindgen_prelude::PromiseRaw<
                        'env,
                        napi::bindgen_prelude::Either<String, $crate::failure::NativeFailure>,
                    >,
                > {
                    let client: $crate::work::ClientKey = work_methods!(@client $($client)?);
                    let work = move |node: &preconf_chain::Node| work_methods!(@with node, $n, $body $(, $with)?);
                    work_methods!(@spawn [$($then)?] self, env, $class, client, work)
                }
            )*
        }
    };
    (@spawn [] $s:tt, $env:ident, $class:expr, $client:ident, $work:ident) => {
        $s.spawn_for($env, $class, $client, $work)
    };
    (@spawn [$then:expr] $s:tt, $env:ident, $class:expr, $client:ident, $work:ident) => {{
        let node = $s.node.clone();
        $crate::work::run_or_defer($env, $class, $then, $client, move || $work(&node))
    }};
    (@client $client:ident) => { $client };
    (@client) => { None };
    (@with $node:ident, $n:ident, $body:expr) => {{
        let $n = $node;
        $body
    }};
    (@with $node:ident, $n:ident, $body:expr, $with:path) => {{
        let $n = $with($node)?;
        $body
    }};
}

/// The one shape of a read answered on the event loop (a forked chain's cold read goes to
/// the upstream threads: `read_or_defer`). Each is a free function taking the node's handle
/// first, then its arguments as Latin-1 (validated ASCII: `latin1::arg`), so a call pays
/// no class unwrap and no UTF-8 conversion either way.
///
/// ```ignore
/// read_methods! {
///     #[doc = " What it answers (lands in native.d.ts)."]
///     fn read_name(arg, other) => |n| body;
/// }
/// ```
macro_rules! read_methods {
    ($(
        $(#[doc = $doc:literal])*
        fn $name:ident($($arg:ident),* $(,)?) => |$n:ident| $body:expr;
    )*) => {
        $(
            $(#[doc = $doc])*
            #[napi_derive::napi]
            // Called only from JavaScript (the test build registers no N-API functions).
            #[cfg_attr(test, allow(dead_code))]
            pub fn $name<'env>(
                env: &'env napi::Env,
                node: u32,
                $($arg: napi::bindgen_prelude::Latin1String,)*
            ) -> napi::Result<
                napi::bindgen_prelude::Either3<
                    napi::bindgen_prelude::Latin1String,
                    $crate::failure::NativeFailure,
                    napi::bindgen_prelude::PromiseRaw<
                        'env,
                        napi::bindgen_prelude::Either<String, $crate::failure::NativeFailure>,
                    >,
                >,
            > {
                $(let $arg = $crate::latin1::arg($arg);)*
                $crate::read_or_defer(env, node, move |$n: &preconf_chain::Node| $body)
            }
        )*
    };
}

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
//! }
//! ```
//!
//! Docs are written `#[doc = "…"]`: a `///` comment passed through a macro reaches napi's
//! type generator as a raw string, which it would print with its `r"`.
//!
//! `per client` adds the last argument `client: Option<u32>`, whose turn the work takes;
//! `with f` hands the body `f(node)?` (the dev methods' `DevApi`) instead of the node. Each
//! invocation is one `#[napi] impl NativeNode` block (`NativeNode` as the invoking file
//! imports it), so the bodies stay in the files of their concern.

macro_rules! work_methods {
    ($(
        $(#[doc = $doc:literal])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(per $client:ident)? on $class:expr
            $(, with $with:path)? => |$n:ident| $body:expr;
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
                    self.spawn_for(env, $class, client, move |node| {
                        work_methods!(@with node, $n, $body $(, $with)?)
                    })
                }
            )*
        }
    };
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

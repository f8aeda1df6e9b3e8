//! geth's `txpool_*` namespace. The status is a count (answered on the event loop); the
//! listings grow with the pool (up to `--pool-max` transactions), so they go to the scan
//! threads.

use napi::bindgen_prelude::{Either, PromiseRaw};
use napi::Env;
use napi_derive::napi;
use preconf_rpc::params;
use preconf_rpc::render::txpool;

use crate::failure::NativeFailure;
use crate::work::Class;
use crate::NativeNode;

#[napi]
impl NativeNode {
    #[napi]
    pub fn txpool_status(&self) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(txpool::status(n.api().txpool.counts()?)))
    }

    #[napi]
    pub fn txpool_content<'env>(
        &self,
        env: &'env Env,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.spawn(env, Class::Scans, |n| Ok(txpool::content(&n.api().txpool.content(None)?)))
    }

    #[napi]
    pub fn txpool_content_from<'env>(
        &self,
        env: &'env Env,
        address: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.spawn(env, Class::Scans, move |n| {
            let sender = params::address(&address)?;
            Ok(txpool::content_from(n.api().txpool.content(Some(sender))?.get(&sender)))
        })
    }

    #[napi]
    pub fn txpool_inspect<'env>(
        &self,
        env: &'env Env,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.spawn(env, Class::Scans, |n| Ok(txpool::inspect(&n.api().txpool.content(None)?)))
    }
}

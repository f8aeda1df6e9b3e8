//! geth's `txpool_*` namespace. The status is a count (answered on the event loop); the
//! listings grow with the pool (up to `--pool-max` transactions), so they go to the scan
//! threads.

use napi::bindgen_prelude::Either;
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
}

work_methods! {
    fn txpool_content() on Class::Scans => |n| Ok(txpool::content(&n.api().txpool.content(None)?));

    fn txpool_content_from(address: String) on Class::Scans => |n| {
        let sender = params::address(&address)?;
        Ok(txpool::content_from(n.api().txpool.content(Some(sender))?.get(&sender)))
    };

    fn txpool_inspect() on Class::Scans => |n| Ok(txpool::inspect(&n.api().txpool.content(None)?));
}

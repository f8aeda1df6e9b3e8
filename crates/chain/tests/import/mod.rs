//! Block import against the execution-apis rpc-compat chain (test/fixtures/rpc-compat/chain):
//! the whole chain into a real store, tampered blocks, resuming.

use crate::kit;

mod chain;
mod op;
mod resume;
mod sim_roots;
mod support;
mod tampered;

//! Consensus rules for block import, against the execution-apis rpc-compat chain
//! (test/fixtures/rpc-compat/chain: a geth genesis and 54 blocks from Homestead to BPO2).

use crate::kit;

mod blobs;
mod chain;
mod errors;
mod rewards;
mod uncles;

//! The crate's integration tests, one module per subject, linked as one binary.

#[path = "consensus/kit.rs"]
#[allow(dead_code)]
mod kit;

mod blob_tx;
mod consensus;
mod genesis;
mod history;
mod import;
mod replica;
mod sequencer;
mod store;
mod upgrades;

//! The crate's integration tests, one module per subject, linked as one binary.

mod common;

mod pending;
mod prune;
mod random_blocks;
mod running_blocks;
mod vectors;

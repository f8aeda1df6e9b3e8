//! The crate's integration tests, one module per subject, linked as one binary.

mod base_block_1;
mod canyon;
mod dev_chain;
mod gas_price_oracle;
mod holocene_witness;
mod isthmus;
mod jovian;
mod jovian_dev;
mod support;

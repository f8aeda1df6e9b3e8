//! JSON shapes of blocks, transactions, receipts and logs, as geth returns them.

mod render;

pub use render::*;

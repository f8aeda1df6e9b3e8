//! The crate's integration tests, one module per subject, linked as one binary.

mod frames;
mod head;
mod random_input;
mod stream;

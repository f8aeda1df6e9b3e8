//! The replication rules as pure code: each is fed what happened (the time, the lease as
//! seen, an append's answer, stream positions) and answers what to do. The tasks in
//! cluster.rs, lease.rs, ledger.rs and follow.rs only wait, talk to NATS and act on the
//! answers, as the builder's loop does with its schedule (preconf-chain builder/schedule.rs),
//! so every rule is tested here without a NATS server.
//!
//! - `election`: the lease as seen (who leads, when it lapses), when a follower campaigns
//!   and for which term, and how long a node that led waits before campaigning again.
//! - `term`: a leader's term: renewal timing, the takeover's first message, and when the
//!   leader must stop (fenced, lease lost or about to lapse, builder stopped or stuck).
//! - `fence`: what a ledger append's answer means: landed, fenced by another leader, or
//!   not landed (sent again).
//! - `catch_up`: reading the stream in order: the next message, gaps, how far behind.

pub mod catch_up;
pub mod election;
pub mod fence;
pub mod term;

#[cfg(test)]
mod tests;

//! What a ledger append's answer means. Each append names the sequence it must follow
//! (`Nats-Expected-Last-Sequence`): once another leader appended, JetStream refuses it and
//! this leader is fenced.
//!
//! An answer that does not say (a timeout, a reconnect, a refusal) is settled by reading the
//! stream: the message after the expected sequence is ours (by its id: it landed), another
//! leader's (fenced), or absent (sent again). JetStream checks the expected sequence before
//! it drops duplicates, so resending alone could not tell.

use preconf_chain::ledger::LedgerError;
use preconf_chain::wire::Kind;

/// The most transactions (and bytes) one message carries.
pub const MAX_BATCH_TXS: usize = 1024;
pub const MAX_BATCH_BYTES: usize = 512 * 1024;

/// The stream's answer to a publish.
#[derive(Debug)]
pub enum Answer {
    /// Stored at this sequence.
    Stored(u64),
    /// Refused: the stream's last sequence is not the expected one.
    WrongLastSequence(String),
    Failed(String),
    TimedOut,
}

/// The sequence the message landed at, or why the stream must be read to know.
pub fn answered(expected: u64, answer: Answer) -> Result<u64, String> {
    match answer {
        Answer::Stored(seq) if seq == expected + 1 => Ok(seq),
        Answer::Stored(seq) => Err(format!("the stream placed it at {seq} instead of {}", expected + 1)),
        Answer::WrongLastSequence(e) => Err(e),
        Answer::Failed(e) => Err(format!("publish failed: {e}")),
        Answer::TimedOut => Err("publish timed out".into()),
    }
}

/// What the stream holds right after the expected sequence.
#[derive(Debug)]
pub enum Found {
    /// A message, with its `Nats-Msg-Id` (empty when it has none).
    Message { id: String },
    /// Nothing; the stream ends at `last`.
    Nothing { last: u64 },
}

/// Who wrote the stream's message after the expected sequence.
#[derive(Debug, PartialEq, Eq)]
pub enum Settled {
    Ours,
    Other(String),
    Absent,
}

pub fn settle(expected: u64, ours: &str, found: Found) -> Settled {
    match found {
        Found::Message { id } if id == ours => Settled::Ours,
        Found::Message { id } => Settled::Other(id),
        // Nothing there and the stream ends at `expected`: not landed. A stream that ends past
        // a hole (messages deleted) cannot be followed on by anyone.
        Found::Nothing { last } if last <= expected => Settled::Absent,
        Found::Nothing { last } => Settled::Other(format!("deleted; the stream ends at {last}")),
    }
}

/// What the writer does once the stream said who wrote after `expected`.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Ours landed at this sequence.
    Landed(u64),
    /// Another leader's: this ledger refuses everything from now on.
    Fenced(LedgerError),
    /// Not landed: send the same message again.
    Resend,
}

/// `refused`: what the publish's answer said.
pub fn step(expected: u64, settled: Settled, refused: &str) -> Step {
    match settled {
        Settled::Ours => Step::Landed(expected + 1),
        Settled::Other(who) => Step::Fenced(LedgerError::Fenced(format!(
            "stream message {} is another leader's ({who}), not this one's ({refused})",
            expected + 1
        ))),
        Settled::Absent => Step::Resend,
    }
}

/// The id of this leader's `n`-th message of `term` (what settling recognises as ours).
pub fn message_id(node: &str, term: u64, n: u64) -> String {
    format!("{node}.{term}.{n}")
}

/// The block a record is about: a sealed block's successor (the block it opens), else its
/// own. Transactions written later are numbered no lower, so the stream stays in block order.
pub fn about(kind: Kind, number: u64) -> u64 {
    if kind == Kind::Sealed {
        number + 1
    } else {
        number
    }
}

/// Whether a batch of `txs` transactions and `bytes` bytes may take another one.
pub fn batch_has_room(txs: usize, bytes: usize) -> bool {
    txs < MAX_BATCH_TXS && bytes < MAX_BATCH_BYTES
}

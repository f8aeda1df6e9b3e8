//! The replication wire format (the stream's messages): one message per change of the
//! leader's published view, compact binary (RLP), fixed by this file and versioned by its
//! first byte. Replicas read it (`replica`), a cluster's leader writes it (`ledger`).
//!
//! ```text
//! message  = version (1 byte, 1) · kind (1 byte) · number (u64 BE) · index (u64 BE) · body (RLP)
//! kind 1   pending: [build, unix_ms, reset, first, header, [tx…], changes, payload id?]
//! kind 2   sealed:  [hash, header, [tx…], [ommer…], [withdrawal…], changes, next]
//! tx       = [EIP-2718 bytes, sender, status, cumulative gas, gas used, [log…]]
//! status   = 1 byte (EIP-658) or 32 bytes (pre-Byzantium post-state root)
//! changes  = store::change_sets encoding (accounts, slots and codes, sorted)
//! next     = "" or the RLP of a pending body: the block opened with the seal
//! kind 3   txs:     [EIP-2718 bytes…]   transactions a clustered leader accepted
//! kind 4   term:    [term, node, url, unix_ms]   a clustered leader's first message
//! kind 5   rewound: [hash]   the leader's head moved back to block `number`, of this hash
//! ```
//!
//! `payload id` (8 bytes) is there only for a block the Engine API started (sequencer
//! mode), so a stream without one reads as before.
//!
//! Kinds 3 and 4 carry the number of the block being built when they were written (and
//! its pre-confirmation index), so a stream stays in block order whatever the kind.
//!
//! Kind 5 is written when op-node's forkchoice takes unsafe blocks back off a sequencer
//! (engine/forkchoice.rs): the blocks after `number` are gone, and the sealed blocks that
//! follow it build on `hash`. So block numbers go back in the stream only right after one.
//!
//! `number` is the block the message is about (the block being built for `pending`), `index`
//! its pre-confirmation index (0 for `sealed`). They are outside the RLP so that a reader can
//! place a message in the chain from its first 18 bytes (`peek`).

use std::sync::Arc;

use alloy_consensus::{Eip658Value, Header, Receipt};
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Address, Bytes, Log, B256, B64};
use alloy_rlp::{BufMut, Decodable, Encodable, RlpDecodable, RlpEncodable};

use crate::changes::StateChanges;
use crate::store::change_sets::{decode_changes, encode_changes, ChangeSetError};
use crate::store::codec::TrailingNonce;
use crate::types::{BlockData, ExecutedTx};

pub const VERSION: u8 = 1;
/// Bytes before the RLP body.
pub const ENVELOPE_LEN: usize = 18;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The block being built: opened, one more pre-confirmation, or a whole snapshot.
    Pending = 1,
    /// A sealed block, with the block opened after it when there is one.
    Sealed = 2,
    /// Transactions a clustered leader accepted into its pool (in the log before their
    /// hashes were returned, so a new leader's pool has them).
    Txs = 3,
    /// A clustered leader's first message of its term: nothing older can follow it.
    Term = 4,
    /// The leader's head moved back (an Engine API forkchoice): the blocks after it are gone.
    Rewound = 5,
}

impl Kind {
    /// The stream subject's last token.
    pub fn subject(self) -> &'static str {
        match self {
            Kind::Pending => "pending",
            Kind::Sealed => "sealed",
            Kind::Txs => "txs",
            Kind::Term => "term",
            Kind::Rewound => "rewound",
        }
    }
}

/// Where a message stands in the chain, read from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub kind: Kind,
    pub number: u64,
    pub index: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("message too short ({0} bytes)")]
    Short(usize),
    #[error("unsupported message version {0} (this node reads version {VERSION})")]
    Version(u8),
    #[error("unknown message kind {0}")]
    Kind(u8),
    #[error("malformed body: {0}")]
    Rlp(#[from] alloy_rlp::Error),
    #[error("malformed transaction: {0}")]
    Tx(#[source] preconf_op::tx::OpTxError),
    #[error("malformed transaction: bad receipt status of {0} bytes")]
    ReceiptStatus(usize),
    #[error(transparent)]
    Changes(#[from] ChangeSetError),
    #[error("the envelope says block {envelope} but the header says {header}")]
    Number { envelope: u64, header: u64 },
    #[error("{0} bytes after the body")]
    Trailing(usize),
}

/// An update of the block being built.
#[derive(Clone, Debug)]
pub struct PendingUpdate {
    /// Which run of the leader built it: a pre-confirmation only follows one of its own run.
    pub build: u64,
    pub preconf_index: u64,
    /// When the leader made it visible (unix ms); replicas announce the same.
    pub unix_ms: u64,
    /// Starts the block's pending view (opened, or a snapshot): `txs` are all of them.
    pub reset: bool,
    /// Transactions the block had before this update (0 with `reset`).
    pub first: u64,
    /// The block being built, roots as of this update.
    pub header: Header,
    pub txs: Vec<Arc<ExecutedTx>>,
    /// What this update changed: one overlay layer.
    pub changes: StateChanges,
    /// The Engine API's id of the block (sequencer mode): a new leader continues the job.
    pub payload_id: Option<B64>,
}

#[derive(Clone, Debug)]
pub struct SealedBlock {
    pub hash: B256,
    pub header: Header,
    pub txs: Vec<Arc<ExecutedTx>>,
    pub ommers: Vec<Header>,
    pub withdrawals: Vec<Withdrawal>,
    pub changes: StateChanges,
    /// The block the leader opened with this seal (pre-confirmation 0), published with it.
    pub next: Option<PendingUpdate>,
}

/// A clustered leader's announcement of its term.
#[derive(Clone, Debug, PartialEq, Eq, RlpEncodable, RlpDecodable)]
pub struct TermStart {
    pub term: u64,
    /// The leader's node id and where it takes transactions (its advertised URL).
    pub node: String,
    pub url: String,
    pub unix_ms: u64,
}

/// Where a leader's head moved back to: every block after `number` was taken off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RewoundTo {
    pub number: u64,
    pub hash: B256,
}

#[derive(Clone, Debug)]
pub enum Message {
    Pending(Box<PendingUpdate>),
    Sealed(Box<SealedBlock>),
    Txs(Vec<Bytes>),
    Term(TermStart),
    Rewound(RewoundTo),
}

/// Encodes a move of the leader's head back to `to` (the blocks after it taken off).
pub fn encode_rewound(to: RewoundTo) -> Vec<u8> {
    let mut out = envelope(Kind::Rewound, to.number, 0);
    list(&mut out, |p| to.hash.encode(p));
    out
}

/// Encodes transactions a leader accepted while block `number` was being built.
pub fn encode_txs(number: u64, index: u64, raw: &[Bytes]) -> Vec<u8> {
    let mut out = envelope(Kind::Txs, number, index);
    alloy_rlp::encode_list::<_, Bytes>(raw, &mut out);
    out
}

/// Encodes a leader's term announcement, written while block `number` is being built.
pub fn encode_term(number: u64, index: u64, t: &TermStart) -> Vec<u8> {
    let mut out = envelope(Kind::Term, number, index);
    t.encode(&mut out);
    out
}

/// Encodes the block being built. `first`: how many of `block.txs` are already announced
/// (0 with `reset`, which sends them all).
pub fn encode_pending(
    block: &BlockData,
    build: u64,
    unix_ms: u64,
    reset: bool,
    first: usize,
    changes: &StateChanges,
) -> Vec<u8> {
    let index = block.preconf_index.unwrap_or_default();
    let mut out = envelope(Kind::Pending, block.header.number, index);
    pending_body(block, build, unix_ms, reset, first, changes, &mut out);
    out
}

/// Encodes a sealed block and, when given, the block opened right after it.
pub fn encode_sealed(
    block: &BlockData,
    changes: &StateChanges,
    next: Option<(&BlockData, u64, u64, &StateChanges)>,
) -> Vec<u8> {
    let mut out = envelope(Kind::Sealed, block.header.number, 0);
    list(&mut out, |p| {
        block.hash.unwrap_or_else(|| block.header.hash_slow()).encode(p);
        block.header.encode(p);
        list(p, |l| block.txs.iter().for_each(|t| encode_tx(t, l)));
        block.ommers.encode(p);
        block.withdrawals.encode(p);
        encode_changes(changes, p);
        let mut next_body = Vec::new();
        if let Some((b, build, unix_ms, c)) = next {
            pending_body(b, build, unix_ms, true, 0, c, &mut next_body);
        }
        next_body.as_slice().encode(p);
    });
    out
}

/// Where a message stands, from its first bytes.
pub fn peek(data: &[u8]) -> Result<Envelope, CodecError> {
    if data.len() < ENVELOPE_LEN {
        return Err(CodecError::Short(data.len()));
    }
    if data[0] != VERSION {
        return Err(CodecError::Version(data[0]));
    }
    let kind = match data[1] {
        1 => Kind::Pending,
        2 => Kind::Sealed,
        3 => Kind::Txs,
        4 => Kind::Term,
        5 => Kind::Rewound,
        k => return Err(CodecError::Kind(k)),
    };
    let number = u64::from_be_bytes(data[2..10].try_into().expect("8 bytes"));
    let index = u64::from_be_bytes(data[10..18].try_into().expect("8 bytes"));
    Ok(Envelope { kind, number, index })
}

/// The hash of a sealed block's message, without decoding the rest.
pub fn peek_sealed_hash(data: &[u8]) -> Result<B256, CodecError> {
    if peek(data)?.kind != Kind::Sealed {
        return Err(CodecError::Kind(Kind::Pending as u8));
    }
    let mut buf = &data[ENVELOPE_LEN..];
    let mut body = open_list(&mut buf)?;
    Ok(B256::decode(&mut body)?)
}

/// The head a message leaves the stream's chain at: a sealed block's, or the block a
/// rewind went back to; `None` for the other kinds.
pub fn peek_head(data: &[u8]) -> Result<Option<RewoundTo>, CodecError> {
    let env = peek(data)?;
    if !matches!(env.kind, Kind::Sealed | Kind::Rewound) {
        return Ok(None);
    }
    let mut buf = &data[ENVELOPE_LEN..];
    let mut body = open_list(&mut buf)?;
    Ok(Some(RewoundTo { number: env.number, hash: B256::decode(&mut body)? }))
}

pub fn decode(data: &[u8]) -> Result<Message, CodecError> {
    let env = peek(data)?;
    let mut buf = &data[ENVELOPE_LEN..];
    let message = match env.kind {
        Kind::Pending => Message::Pending(Box::new(decode_pending(&mut buf, env.index)?)),
        Kind::Sealed => Message::Sealed(Box::new(decode_sealed(&mut buf)?)),
        Kind::Txs => Message::Txs(Vec::<Bytes>::decode(&mut buf)?),
        Kind::Term => Message::Term(TermStart::decode(&mut buf)?),
        Kind::Rewound => {
            let mut body = open_list(&mut buf)?;
            let hash = B256::decode(&mut body)?;
            if !body.is_empty() {
                return Err(CodecError::Trailing(body.len()));
            }
            Message::Rewound(RewoundTo { number: env.number, hash })
        }
    };
    if !buf.is_empty() {
        return Err(CodecError::Trailing(buf.len()));
    }
    let header_number = match &message {
        Message::Pending(u) => u.header.number,
        Message::Sealed(b) => b.header.number,
        Message::Txs(_) | Message::Term(_) | Message::Rewound(_) => env.number,
    };
    if header_number != env.number {
        return Err(CodecError::Number { envelope: env.number, header: header_number });
    }
    Ok(message)
}

fn envelope(kind: Kind, number: u64, index: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(1024);
    out.push(VERSION);
    out.push(kind as u8);
    out.extend_from_slice(&number.to_be_bytes());
    out.extend_from_slice(&index.to_be_bytes());
    out
}

/// Writes an RLP list whose payload `fill` writes.
fn list(out: &mut dyn BufMut, fill: impl FnOnce(&mut Vec<u8>)) {
    let mut payload = Vec::new();
    fill(&mut payload);
    alloy_rlp::Header { list: true, payload_length: payload.len() }.encode(out);
    out.put_slice(&payload);
}

/// Takes an RLP list off the front of `buf` and returns its payload.
fn open_list<'a>(buf: &mut &'a [u8]) -> Result<&'a [u8], CodecError> {
    let header = alloy_rlp::Header::decode(buf)?;
    if !header.list {
        return Err(alloy_rlp::Error::UnexpectedString.into());
    }
    if buf.len() < header.payload_length {
        return Err(alloy_rlp::Error::InputTooShort.into());
    }
    let (payload, rest) = buf.split_at(header.payload_length);
    *buf = rest;
    Ok(payload)
}

fn pending_body(
    block: &BlockData,
    build: u64,
    unix_ms: u64,
    reset: bool,
    first: usize,
    changes: &StateChanges,
    out: &mut dyn BufMut,
) {
    let first = if reset { 0 } else { first.min(block.txs.len()) };
    list(out, |p| {
        build.encode(p);
        unix_ms.encode(p);
        reset.encode(p);
        (first as u64).encode(p);
        block.header.encode(p);
        list(p, |l| block.txs[first..].iter().for_each(|t| encode_tx(t, l)));
        encode_changes(changes, p);
        if let Some(id) = &block.payload_id {
            id.encode(p);
        }
    });
}

fn decode_pending(buf: &mut &[u8], preconf_index: u64) -> Result<PendingUpdate, CodecError> {
    let mut p = open_list(buf)?;
    let build = u64::decode(&mut p)?;
    let unix_ms = u64::decode(&mut p)?;
    let reset = bool::decode(&mut p)?;
    let first = u64::decode(&mut p)?;
    let header = Header::decode(&mut p)?;
    let txs = decode_txs(&mut p)?;
    let changes = decode_changes(&mut p)?;
    let payload_id = match p.is_empty() {
        true => None,
        false => Some(B64::decode(&mut p)?),
    };
    if !p.is_empty() {
        return Err(CodecError::Trailing(p.len()));
    }
    Ok(PendingUpdate { build, preconf_index, unix_ms, reset, first, header, txs, changes, payload_id })
}

fn decode_sealed(buf: &mut &[u8]) -> Result<SealedBlock, CodecError> {
    let mut p = open_list(buf)?;
    let hash = B256::decode(&mut p)?;
    let header = Header::decode(&mut p)?;
    let txs = decode_txs(&mut p)?;
    let ommers = Vec::<Header>::decode(&mut p)?;
    let withdrawals = Vec::<Withdrawal>::decode(&mut p)?;
    let changes = decode_changes(&mut p)?;
    let next_body = Bytes::decode(&mut p)?;
    if !p.is_empty() {
        return Err(CodecError::Trailing(p.len()));
    }
    // The block opened with a seal is always pre-confirmation 0.
    let next = if next_body.is_empty() {
        None
    } else {
        let mut b = next_body.as_ref();
        let update = decode_pending(&mut b, 0)?;
        if !b.is_empty() {
            return Err(CodecError::Trailing(b.len()));
        }
        Some(update)
    };
    Ok(SealedBlock { hash, header, txs, ommers, withdrawals, changes, next })
}

/// A transaction with its outcome, as it travels (the status: one byte, or a 32-byte root).
/// An OP deposit's receipt nonce trails; absent for every other transaction, so an
/// Ethereum chain's records are the same bytes as before it existed.
#[derive(RlpEncodable)]
#[rlp(trailing)]
struct TxRecordRef<'a> {
    raw: Bytes,
    sender: Address,
    status: &'a [u8],
    cumulative_gas_used: u64,
    gas_used: u64,
    logs: &'a Vec<Log>,
    deposit_nonce: Option<TrailingNonce>,
}

#[derive(RlpDecodable)]
#[rlp(trailing)]
struct TxRecord {
    raw: Bytes,
    sender: Address,
    status: Bytes,
    cumulative_gas_used: u64,
    gas_used: u64,
    logs: Vec<Log>,
    deposit_nonce: Option<TrailingNonce>,
}

fn encode_tx(t: &ExecutedTx, out: &mut dyn BufMut) {
    let ok;
    let status: &[u8] = match &t.receipt.status {
        Eip658Value::Eip658(success) => {
            ok = [*success as u8];
            &ok
        }
        Eip658Value::PostState(root) => root.as_slice(),
    };
    TxRecordRef {
        raw: t.tx.encoded_2718().into(),
        sender: t.sender,
        status,
        cumulative_gas_used: t.receipt.cumulative_gas_used,
        gas_used: t.gas_used,
        logs: &t.receipt.logs,
        deposit_nonce: t.deposit_nonce.map(TrailingNonce),
    }
    .encode(out);
}

fn decode_txs(buf: &mut &[u8]) -> Result<Vec<Arc<ExecutedTx>>, CodecError> {
    let mut items = open_list(buf)?;
    let mut txs = Vec::new();
    while !items.is_empty() {
        let r = TxRecord::decode(&mut items)?;
        let tx = preconf_op::OpTx::decode_2718(&r.raw).map_err(CodecError::Tx)?;
        let status = match r.status.as_ref() {
            [0] => Eip658Value::Eip658(false),
            [1] => Eip658Value::Eip658(true),
            root if root.len() == 32 => Eip658Value::PostState(B256::from_slice(root)),
            other => return Err(CodecError::ReceiptStatus(other.len())),
        };
        let receipt = Receipt { status, cumulative_gas_used: r.cumulative_gas_used, logs: r.logs };
        let deposit_nonce = r.deposit_nonce.map(|n| n.0);
        txs.push(Arc::new(ExecutedTx { tx, sender: r.sender, receipt, gas_used: r.gas_used, deposit_nonce }));
    }
    Ok(txs)
}

/// `meta` key of the stream position: the sequence of the message that sealed the head
/// (u64 BE) followed by the stream's name.
pub const POSITION_KEY: &str = "replica_position";

/// Where a replica stands in a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub stream: String,
    /// Sequence of the message of the replica's head block.
    pub seq: u64,
}

impl Position {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = self.seq.to_be_bytes().to_vec();
        v.extend_from_slice(self.stream.as_bytes());
        v
    }

    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let seq = u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?);
        Some(Self { seq, stream: String::from_utf8(bytes[8..].to_vec()).ok()? })
    }
}

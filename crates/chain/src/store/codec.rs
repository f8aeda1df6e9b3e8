//! Byte layouts of keys and values in the store.

use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_rlp::{Decodable, Encodable, RlpDecodable, RlpEncodable};

use crate::changes::AccountState;

/// A transaction as stored in a block body: its EIP-2718 bytes and the recovered sender.
#[derive(Clone, Debug, RlpEncodable, RlpDecodable)]
pub struct StoredTx {
    pub raw: Bytes,
    pub sender: Address,
}

/// A block body: transactions with their senders, uncle headers (proof-of-work chains)
/// and withdrawals (Shanghai on).
#[derive(Clone, Debug, Default, RlpEncodable, RlpDecodable)]
pub struct StoredBody {
    pub txs: Vec<StoredTx>,
    pub ommers: Vec<alloy_consensus::Header>,
    pub withdrawals: Vec<alloy_eips::eip4895::Withdrawal>,
}

/// Receipts as EIP-2718 encoded consensus receipts (status, cumulative gas, bloom, logs).
#[derive(Clone, Debug, Default, RlpEncodable, RlpDecodable)]
pub struct StoredReceipts {
    pub receipts: Vec<Bytes>,
}

/// A deposit receipt's nonce as the last, optional field of a stored or streamed record.
/// alloy-rlp's `trailing` reads 0x80 as "absent", which is also how a plain `u64` 0 encodes,
/// so nonce 0 (a chain's first deposit) would come back as no nonce. It is written as a
/// one-item list (`[nonce]`, never 0x80); a bare integer, as records before this were
/// written, is still read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrailingNonce(pub u64);

impl alloy_rlp::Encodable for TrailingNonce {
    fn encode(&self, out: &mut dyn alloy_rlp::BufMut) {
        alloy_rlp::Header { list: true, payload_length: self.0.length() }.encode(out);
        self.0.encode(out);
    }

    fn length(&self) -> usize {
        let payload = self.0.length();
        alloy_rlp::length_of_length(payload) + payload
    }
}

impl alloy_rlp::Decodable for TrailingNonce {
    fn decode(buf: &mut &[u8]) -> alloy_rlp::Result<Self> {
        if buf.first().is_some_and(|&b| b < alloy_rlp::EMPTY_LIST_CODE) {
            return u64::decode(buf).map(Self);
        }
        let mut body = alloy_rlp::Header::decode_bytes(buf, true)?;
        let nonce = u64::decode(&mut body)?;
        if !body.is_empty() {
            return Err(alloy_rlp::Error::UnexpectedLength);
        }
        Ok(Self(nonce))
    }
}

/// The version byte of receipts stored without their blooms. Schema-2 stores hold the
/// EIP-2718 receipts themselves, an RLP list, whose first byte is 0xc0 or above.
const COMPACT_RECEIPTS: u8 = 1;

/// A receipt as stored: its bloom (256 of a plain transfer's ~270 bytes) is left out and
/// recomputed from the logs when read. An OP deposit's receipt nonce trails (absent on
/// every other receipt, so an Ethereum chain's stored bytes are as before).
#[derive(RlpEncodable, RlpDecodable)]
#[rlp(trailing)]
struct CompactReceipt {
    ty: u8,
    /// One byte (EIP-658 status) or 32 (a pre-Byzantium post-state root).
    status: Bytes,
    cumulative_gas_used: u64,
    logs: Vec<alloy_primitives::Log>,
    deposit_nonce: Option<TrailingNonce>,
}

/// Receipts as the store writes them: `COMPACT_RECEIPTS` then the RLP list of compact ones.
pub fn encode_receipts(receipts: &StoredReceipts) -> Option<Vec<u8>> {
    use alloy_consensus::Eip658Value;
    let mut compact = Vec::with_capacity(receipts.receipts.len());
    for raw in &receipts.receipts {
        let decoded = preconf_op::receipt::decode_2718(raw).ok()?;
        let receipt = decoded.receipt;
        let status = match receipt.status {
            Eip658Value::Eip658(ok) => Bytes::from(vec![ok as u8]),
            Eip658Value::PostState(root) => Bytes::copy_from_slice(root.as_slice()),
        };
        let (ty, cumulative_gas_used, deposit_nonce) = (decoded.ty, receipt.cumulative_gas_used, decoded.deposit_nonce);
        let deposit_nonce = deposit_nonce.map(TrailingNonce);
        compact.push(CompactReceipt { ty, status, cumulative_gas_used, logs: receipt.logs, deposit_nonce });
    }
    let mut out = vec![COMPACT_RECEIPTS];
    compact.encode(&mut out);
    Some(out)
}

/// Stored receipts back as EIP-2718 receipts with their blooms (either layout).
pub fn decode_receipts(bytes: &[u8]) -> Option<StoredReceipts> {
    use alloy_consensus::{Eip658Value, Receipt};
    let Some((&COMPACT_RECEIPTS, mut rest)) = bytes.split_first() else { return decode(bytes) };
    let compact = Vec::<CompactReceipt>::decode(&mut rest).ok()?;
    let mut receipts = Vec::with_capacity(compact.len());
    for c in compact {
        let status = match c.status.len() {
            1 => Eip658Value::Eip658(c.status[0] == 1),
            32 => Eip658Value::PostState(B256::from_slice(&c.status)),
            _ => return None,
        };
        let receipt = Receipt { status, cumulative_gas_used: c.cumulative_gas_used, logs: c.logs };
        receipts.push(Bytes::from(preconf_op::receipt::encode_2718(c.ty, receipt, c.deposit_nonce.map(|n| n.0))?));
    }
    Some(StoredReceipts { receipts })
}

pub fn encode<T: Encodable>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.length());
    value.encode(&mut out);
    out
}

pub fn decode<T: Decodable>(mut bytes: &[u8]) -> Option<T> {
    T::decode(&mut bytes).ok()
}

pub fn u64_from(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[..8]);
    u64::from_be_bytes(b)
}

pub fn account_key(address: &Address, block: u64) -> [u8; 28] {
    let mut k = [0u8; 28];
    k[..20].copy_from_slice(address.as_slice());
    k[20..].copy_from_slice(&block.to_be_bytes());
    k
}

pub fn storage_key(address: &Address, slot: &U256, block: u64) -> [u8; 60] {
    let mut k = [0u8; 60];
    k[..20].copy_from_slice(address.as_slice());
    k[20..52].copy_from_slice(&slot.to_be_bytes::<32>());
    k[52..].copy_from_slice(&block.to_be_bytes());
    k
}

pub fn tx_location(block: u64, index: u32) -> [u8; 12] {
    let mut k = [0u8; 12];
    k[..8].copy_from_slice(&block.to_be_bytes());
    k[8..].copy_from_slice(&index.to_be_bytes());
    k
}

pub fn decode_tx_location(bytes: &[u8; 12]) -> (u64, u32) {
    let mut i = [0u8; 4];
    i.copy_from_slice(&bytes[8..]);
    (u64_from(bytes), u32::from_be_bytes(i))
}

/// nonce (8) | balance (32) | code hash (32); an empty value means "does not exist".
pub fn encode_account(state: &AccountState) -> Vec<u8> {
    let mut v = Vec::with_capacity(72);
    v.extend_from_slice(&state.nonce.to_be_bytes());
    v.extend_from_slice(&state.balance.to_be_bytes::<32>());
    v.extend_from_slice(state.code_hash.as_slice());
    v
}

pub fn decode_account(bytes: &[u8]) -> Option<AccountState> {
    if bytes.len() != 72 {
        return None;
    }
    Some(AccountState {
        nonce: u64_from(&bytes[..8]),
        balance: U256::from_be_slice(&bytes[8..40]),
        code_hash: B256::from_slice(&bytes[40..72]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_consensus::{Eip658Value, Receipt, ReceiptEnvelope, TxType};
    use alloy_eips::eip2718::Encodable2718;
    use alloy_primitives::{Address, LogData};

    fn receipt(ty: TxType, status: Eip658Value, count: usize) -> Bytes {
        let logs = (0..count)
            .map(|i| alloy_primitives::Log {
                address: Address::repeat_byte(i as u8 + 1),
                data: LogData::new_unchecked(vec![B256::repeat_byte(7)], Bytes::from(vec![i as u8; 40])),
            })
            .collect();
        let r = Receipt { status, cumulative_gas_used: 21_000 * (count as u64 + 1), logs };
        ReceiptEnvelope::from_typed(ty, r.with_bloom()).encoded_2718().into()
    }

    /// Stored without blooms, read back byte for byte; a schema-2 value (blooms inside)
    /// still reads.
    #[test]
    fn receipts_are_stored_without_blooms_and_read_back_whole() {
        let receipts = StoredReceipts {
            receipts: vec![
                receipt(TxType::Legacy, Eip658Value::Eip658(true), 0),
                receipt(TxType::Eip1559, Eip658Value::Eip658(false), 2),
                receipt(TxType::Eip2930, Eip658Value::PostState(B256::repeat_byte(9)), 1),
                receipt(TxType::Eip7702, Eip658Value::Eip658(true), 3),
            ],
        };
        let stored = encode_receipts(&receipts).unwrap();
        let back = decode_receipts(&stored).unwrap();
        assert_eq!(back.receipts, receipts.receipts);
        let legacy = encode(&receipts);
        assert!(stored.len() + 4 * 250 < legacy.len(), "{} vs {}", stored.len(), legacy.len());
        assert_eq!(decode_receipts(&legacy).unwrap().receipts, receipts.receipts);
    }

    /// An OP chain's deposit receipts (with and without Canyon's nonce) keep their type and
    /// nonce through the compact layout.
    #[test]
    fn deposit_receipts_are_stored_with_their_nonce() {
        let deposit = |nonce| {
            let r = Receipt { status: Eip658Value::Eip658(true), cumulative_gas_used: 45_000, logs: vec![] };
            Bytes::from(preconf_op::receipt::encode_2718(0x7e, r, nonce).unwrap())
        };
        let receipts = StoredReceipts {
            receipts: vec![deposit(Some(41)), receipt(TxType::Eip1559, Eip658Value::Eip658(true), 1), deposit(None)],
        };
        let back = decode_receipts(&encode_receipts(&receipts).unwrap()).unwrap();
        assert_eq!(back.receipts, receipts.receipts);
        assert_eq!(preconf_op::receipt::decode_2718(&back.receipts[0]).unwrap().deposit_nonce, Some(41));
    }

    #[test]
    fn a_deposit_nonce_of_zero_survives_the_trailing_field() {
        for nonce in [0u64, 1, 300] {
            let record = CompactReceipt {
                ty: 0x7e,
                status: Bytes::from(vec![1]),
                cumulative_gas_used: 50_000,
                logs: vec![],
                deposit_nonce: Some(TrailingNonce(nonce)),
            };
            let back: CompactReceipt = decode(&encode(&record)).unwrap();
            assert_eq!(back.deposit_nonce, Some(TrailingNonce(nonce)));
        }
        // Records written before the nonce became a list: a bare integer is read too.
        let mut old = Vec::new();
        7u64.encode(&mut old);
        assert_eq!(TrailingNonce::decode(&mut &old[..]).unwrap(), TrailingNonce(7));
    }
}

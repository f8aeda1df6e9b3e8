//! The consensus receipt of any OP transaction: an Ethereum receipt for the Ethereum types,
//! and for a deposit 0x7E ‖ rlp([status, cumulativeGas, bloom, logs]) with, from Canyon,
//! `depositNonce` and `depositReceiptVersion` (1) appended. alloy's `ReceiptEnvelope` has
//! no deposit variant, so the chain's store and roots go through here for every receipt.

use alloy_consensus::{Eip658Value, Receipt, ReceiptEnvelope, TxType};
use alloy_eips::eip2718::{Decodable2718, Encodable2718};
use alloy_primitives::{Bloom, Log};
use alloy_rlp::{BufMut, Decodable, Encodable, Header};

use crate::deposit::DEPOSIT_TX_TYPE;
use crate::rpc::DEPOSIT_RECEIPT_VERSION;

/// The EIP-2718 receipt of a transaction of type `ty`. `deposit_nonce` is a deposit's
/// receipt nonce (set from Canyon on, when the receipt carries it); ignored for other types.
/// `None` for a type neither Ethereum nor OP knows.
pub fn encode_2718(ty: u8, receipt: Receipt<Log>, deposit_nonce: Option<u64>) -> Option<Vec<u8>> {
    if ty != DEPOSIT_TX_TYPE {
        let ty = TxType::try_from(ty).ok()?;
        return Some(ReceiptEnvelope::from_typed(ty, receipt.with_bloom()).encoded_2718());
    }
    let bloom = alloy_primitives::logs_bloom(receipt.logs.iter());
    Some(encode_deposit(&receipt, bloom, deposit_nonce))
}

fn encode_deposit(receipt: &Receipt<Log>, bloom: Bloom, deposit_nonce: Option<u64>) -> Vec<u8> {
    let success = receipt.status.coerce_status();
    let version = DEPOSIT_RECEIPT_VERSION;
    let payload = success.length()
        + receipt.cumulative_gas_used.length()
        + bloom.length()
        + receipt.logs.length()
        + deposit_nonce.map_or(0, |n| n.length() + version.length());
    let mut out = Vec::with_capacity(payload + 8);
    out.put_u8(DEPOSIT_TX_TYPE);
    Header { list: true, payload_length: payload }.encode(&mut out);
    success.encode(&mut out);
    receipt.cumulative_gas_used.encode(&mut out);
    bloom.encode(&mut out);
    receipt.logs.encode(&mut out);
    if let Some(nonce) = deposit_nonce {
        nonce.encode(&mut out);
        version.encode(&mut out);
    }
    out
}

/// A decoded receipt: its type byte, the receipt, and a deposit receipt's nonce.
pub struct DecodedReceipt {
    pub ty: u8,
    pub receipt: Receipt<Log>,
    pub deposit_nonce: Option<u64>,
}

/// Reads back what `encode_2718` wrote.
pub fn decode_2718(raw: &[u8]) -> alloy_rlp::Result<DecodedReceipt> {
    if raw.first() != Some(&DEPOSIT_TX_TYPE) {
        let envelope = ReceiptEnvelope::<Log>::decode_2718(&mut &raw[..])?;
        let ty = envelope.tx_type() as u8;
        let receipt = envelope.as_receipt().cloned().ok_or(alloy_rlp::Error::Custom("not a receipt"))?;
        return Ok(DecodedReceipt { ty, receipt, deposit_nonce: None });
    }
    let mut buf = &raw[1..];
    let header = Header::decode(&mut buf)?;
    if !header.list || buf.len() < header.payload_length {
        return Err(alloy_rlp::Error::UnexpectedString);
    }
    let (mut fields, rest) = buf.split_at(header.payload_length);
    if !rest.is_empty() {
        return Err(alloy_rlp::Error::Custom("bytes after the receipt"));
    }
    let status = bool::decode(&mut fields)?;
    let cumulative_gas_used = u64::decode(&mut fields)?;
    let _bloom = Bloom::decode(&mut fields)?;
    let logs = Vec::<Log>::decode(&mut fields)?;
    let deposit_nonce = match fields.is_empty() {
        true => None,
        false => {
            let nonce = u64::decode(&mut fields)?;
            let _version = u64::decode(&mut fields)?;
            Some(nonce)
        }
    };
    let receipt = Receipt { status: Eip658Value::Eip658(status), cumulative_gas_used, logs };
    Ok(DecodedReceipt { ty: DEPOSIT_TX_TYPE, receipt, deposit_nonce })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{Address, Bytes, B256};

    fn receipt() -> Receipt<Log> {
        let log =
            Log::new_unchecked(Address::with_last_byte(9), vec![B256::with_last_byte(1)], Bytes::from_static(b"x"));
        Receipt { status: Eip658Value::Eip658(true), cumulative_gas_used: 50_000, logs: vec![log] }
    }

    #[test]
    fn deposit_receipts_round_trip_with_and_without_the_nonce() {
        for nonce in [None, Some(7)] {
            let raw = encode_2718(DEPOSIT_TX_TYPE, receipt(), nonce).unwrap();
            let back = decode_2718(&raw).unwrap();
            assert_eq!((back.ty, back.receipt, back.deposit_nonce), (DEPOSIT_TX_TYPE, receipt(), nonce));
        }
    }

    #[test]
    fn ethereum_receipts_are_alloys() {
        let raw = encode_2718(2, receipt(), Some(3)).unwrap();
        assert_eq!(raw, ReceiptEnvelope::Eip1559(receipt().with_bloom()).encoded_2718());
        let back = decode_2718(&raw).unwrap();
        assert_eq!((back.ty, back.deposit_nonce), (2, None));
    }
}

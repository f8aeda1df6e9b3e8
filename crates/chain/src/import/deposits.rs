//! EIP-6110 deposit requests: from Prague on, the deposit contract's `DepositEvent` logs
//! of a block become its type-0 requests (part of `requestsHash`).

use alloy_primitives::{b256, Address, Log, B256};

/// keccak256("DepositEvent(bytes,bytes,bytes,bytes,bytes)")
pub const DEPOSIT_EVENT_TOPIC: B256 = b256!("649bbc62d0e31342afea4e5cd82d4049e7e1ee912fc0889aa790803be39038c5");

/// Sizes of the event's five fields: pubkey, withdrawal credentials, amount, signature, index.
const FIELD_SIZES: [usize; 5] = [48, 32, 8, 96, 8];

/// Why a deposit contract's log does not decode as a `DepositEvent`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DepositLogError {
    #[error("deposit log too short: {0} bytes")]
    TooShort(usize),
    #[error("deposit log: offset or length out of range")]
    OutOfRange,
    #[error("deposit log: field {field} has {len} bytes, expected {expected}")]
    FieldSize { field: usize, len: usize, expected: usize },
    #[error("deposit log: field runs past the data")]
    PastTheData,
}

/// The concatenated deposit requests (192 bytes each) of the logs emitted by `contract`.
pub fn deposit_requests<'a>(
    contract: Address,
    logs: impl IntoIterator<Item = &'a Log>,
) -> Result<Vec<u8>, DepositLogError> {
    let mut out = Vec::new();
    for log in logs {
        if log.address != contract || log.topics().first() != Some(&DEPOSIT_EVENT_TOPIC) {
            continue;
        }
        decode_deposit(&log.data.data, &mut out)?;
    }
    Ok(out)
}

/// Appends one `DepositEvent`'s fields (ABI: five dynamic `bytes`) to `out`.
fn decode_deposit(data: &[u8], out: &mut Vec<u8>) -> Result<(), DepositLogError> {
    let word = |at: usize| -> Result<usize, DepositLogError> {
        let w = data.get(at..at + 32).ok_or(DepositLogError::TooShort(data.len()))?;
        if w[..24].iter().any(|b| *b != 0) {
            return Err(DepositLogError::OutOfRange);
        }
        Ok(u64::from_be_bytes(w[24..].try_into().expect("8 bytes")) as usize)
    };
    for (i, size) in FIELD_SIZES.iter().enumerate() {
        let offset = word(i * 32)?;
        let len = word(offset)?;
        if len != *size {
            return Err(DepositLogError::FieldSize { field: i, len, expected: *size });
        }
        let field = data.get(offset + 32..offset + 32 + len).ok_or(DepositLogError::PastTheData)?;
        out.extend_from_slice(field);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{keccak256, Bytes, LogData};

    fn abi_bytes_fields(fields: &[Vec<u8>]) -> Vec<u8> {
        let mut head = Vec::new();
        let mut tail = Vec::new();
        let base = fields.len() * 32;
        for f in fields {
            head.extend_from_slice(&[0u8; 24]);
            head.extend_from_slice(&((base + tail.len()) as u64).to_be_bytes());
            tail.extend_from_slice(&[0u8; 24]);
            tail.extend_from_slice(&(f.len() as u64).to_be_bytes());
            tail.extend_from_slice(f);
            tail.resize(tail.len().div_ceil(32) * 32, 0);
        }
        head.extend(tail);
        head
    }

    #[test]
    fn topic_is_the_event_signature() {
        assert_eq!(keccak256("DepositEvent(bytes,bytes,bytes,bytes,bytes)"), DEPOSIT_EVENT_TOPIC);
    }

    #[test]
    fn deposit_logs_of_the_contract_become_192_byte_requests() {
        let contract = Address::repeat_byte(0x42);
        let fields: Vec<Vec<u8>> = FIELD_SIZES.iter().enumerate().map(|(i, n)| vec![i as u8 + 1; *n]).collect();
        let data = Bytes::from(abi_bytes_fields(&fields));
        let deposit = Log { address: contract, data: LogData::new_unchecked(vec![DEPOSIT_EVENT_TOPIC], data.clone()) };
        let elsewhere = Log { address: Address::ZERO, ..deposit.clone() };
        let requests = deposit_requests(contract, [&deposit, &elsewhere, &deposit]).unwrap();
        assert_eq!(requests.len(), 2 * 192);
        assert_eq!(&requests[..192], fields.concat().as_slice());
        let short = Log {
            address: contract,
            data: LogData::new_unchecked(vec![DEPOSIT_EVENT_TOPIC], data[..100].to_vec().into()),
        };
        assert!(deposit_requests(contract, [&short]).is_err());
    }
}

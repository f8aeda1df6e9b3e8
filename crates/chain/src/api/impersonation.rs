//! Sending from any address without its key (`anvil_impersonateAccount`, `cast send
//! --unlocked`): the node builds the transaction, gives it a placeholder signature and keeps
//! the sender beside it, as it keeps every pooled and sealed transaction's sender.

use std::sync::atomic::{AtomicBool, Ordering};

use alloy_primitives::{map::AddressSet, Address, Bytes, Signature, U256};
use parking_lot::RwLock;

/// Which senders `eth_sendTransaction` accepts without a key.
#[derive(Default)]
pub struct Impersonation {
    accounts: RwLock<AddressSet>,
    /// `anvil_autoImpersonateAccount(true)`: every sender.
    all: AtomicBool,
}

impl Impersonation {
    pub fn set(&self, address: Address, on: bool) {
        let mut accounts = self.accounts.write();
        if on {
            accounts.insert(address);
        } else {
            accounts.remove(&address);
        }
    }

    pub fn set_all(&self, on: bool) {
        self.all.store(on, Ordering::Relaxed);
    }

    pub fn covers(&self, address: &Address) -> bool {
        self.all.load(Ordering::Relaxed) || self.accounts.read().contains(address)
    }
}

/// The placeholder signature of a transaction sent for `sender`: `r` is the sender, so two
/// senders' otherwise equal transactions have different hashes. It recovers to no one's
/// key (`s` = 1 is no signature anybody made), so it cannot be replayed as signed.
pub fn placeholder_signature(sender: Address) -> Signature {
    Signature::new(U256::from_be_slice(sender.as_slice()), U256::from(1), false)
}

/// Journal records of such transactions start with this byte, which no EIP-2718 encoding
/// starts with (0x80..0xbf would be an RLP string), then the sender, then the transaction:
/// after a restart they return to the pool with their sender.
pub const JOURNAL_MARK: u8 = 0xb0;

pub fn journal_record(sender: &Address, raw: &[u8]) -> Bytes {
    let mut record = Vec::with_capacity(21 + raw.len());
    record.push(JOURNAL_MARK);
    record.extend_from_slice(sender.as_slice());
    record.extend_from_slice(raw);
    record.into()
}

/// The sender and the transaction of a journal record written by `journal_record`.
pub fn parse_journal_record(record: &[u8]) -> Option<(Address, Bytes)> {
    match record {
        [JOURNAL_MARK, rest @ ..] if rest.len() > 20 => {
            Some((Address::from_slice(&rest[..20]), Bytes::copy_from_slice(&rest[20..])))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_records_keep_the_sender() {
        let sender = Address::repeat_byte(7);
        let record = journal_record(&sender, &[2, 0xc0]);
        assert_eq!(parse_journal_record(&record), Some((sender, Bytes::from_static(&[2, 0xc0]))));
        assert_eq!(parse_journal_record(&[2, 0xc0]), None, "a signed transaction is not one");
    }

    #[test]
    fn impersonation_covers_named_senders_or_everyone() {
        let (a, b) = (Address::repeat_byte(1), Address::repeat_byte(2));
        let imp = Impersonation::default();
        imp.set(a, true);
        assert!(imp.covers(&a) && !imp.covers(&b));
        imp.set_all(true);
        assert!(imp.covers(&b));
        imp.set_all(false);
        imp.set(a, false);
        assert!(!imp.covers(&a));
    }
}

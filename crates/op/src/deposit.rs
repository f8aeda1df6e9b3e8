//! The deposit transaction (type 0x7E): made by the rollup from L1 (the L1-info deposit that
//! opens every block, and users' deposits), never signed. Its hash is the keccak of its
//! EIP-2718 encoding; its sender is a field.

use alloy_primitives::{keccak256, Address, Bytes, TxKind, B256, U256};
use alloy_rlp::{Buf, BufMut, Decodable, Encodable, Header};

pub const DEPOSIT_TX_TYPE: u8 = 0x7E;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxDeposit {
    /// Identifies the deposit's origin (an L1 log, or the L1 block for the L1-info deposit).
    pub source_hash: B256,
    pub from: Address,
    pub to: TxKind,
    /// ETH minted on L2 for the sender before the transaction runs.
    pub mint: u128,
    pub value: U256,
    pub gas_limit: u64,
    /// Before Regolith a system transaction used no block gas and paid no gas.
    pub is_system_transaction: bool,
    pub input: Bytes,
}

impl TxDeposit {
    fn fields_len(&self) -> usize {
        self.source_hash.length()
            + self.from.length()
            + self.to.length()
            + self.mint.length()
            + self.value.length()
            + self.gas_limit.length()
            + self.is_system_transaction.length()
            + self.input.length()
    }

    /// The EIP-2718 encoding: 0x7E ‖ rlp([sourceHash, from, to, mint, value, gas, isSystemTx, data]).
    pub fn encoded_2718(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.fields_len() + 8);
        out.put_u8(DEPOSIT_TX_TYPE);
        Header { list: true, payload_length: self.fields_len() }.encode(&mut out);
        self.source_hash.encode(&mut out);
        self.from.encode(&mut out);
        self.to.encode(&mut out);
        self.mint.encode(&mut out);
        self.value.encode(&mut out);
        self.gas_limit.encode(&mut out);
        self.is_system_transaction.encode(&mut out);
        self.input.encode(&mut out);
        out
    }

    pub fn hash(&self) -> B256 {
        keccak256(self.encoded_2718())
    }

    /// Decodes the EIP-2718 encoding (the type byte included).
    pub fn decode_2718(raw: &[u8]) -> alloy_rlp::Result<Self> {
        let (&ty, mut buf) = raw.split_first().ok_or(alloy_rlp::Error::InputTooShort)?;
        if ty != DEPOSIT_TX_TYPE {
            return Err(alloy_rlp::Error::Custom("not a deposit transaction"));
        }
        let header = Header::decode(&mut buf)?;
        if !header.list {
            return Err(alloy_rlp::Error::UnexpectedString);
        }
        if buf.len() != header.payload_length {
            return Err(alloy_rlp::Error::UnexpectedLength);
        }
        let tx = Self {
            source_hash: Decodable::decode(&mut buf)?,
            from: Decodable::decode(&mut buf)?,
            to: Decodable::decode(&mut buf)?,
            mint: Decodable::decode(&mut buf)?,
            value: Decodable::decode(&mut buf)?,
            gas_limit: Decodable::decode(&mut buf)?,
            is_system_transaction: Decodable::decode(&mut buf)?,
            input: Decodable::decode(&mut buf)?,
        };
        if buf.has_remaining() {
            return Err(alloy_rlp::Error::ListLengthMismatch {
                expected: header.payload_length,
                got: header.payload_length - buf.len(),
            });
        }
        Ok(tx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{address, b256, hex};

    /// Base mainnet block 1's only transaction, the Bedrock L1-info deposit.
    fn base_block_1_deposit() -> Vec<u8> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/op/base-mainnet-block-1/block.json");
        let block: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        hex::decode(block["transactions"][0].as_str().unwrap()).unwrap()
    }

    #[test]
    fn decodes_hashes_and_reencodes_a_real_deposit() {
        let raw = base_block_1_deposit();
        let tx = TxDeposit::decode_2718(&raw).unwrap();
        assert_eq!(tx.from, address!("deaddeaddeaddeaddeaddeaddeaddeaddead0001"));
        assert_eq!(tx.to, TxKind::Call(address!("4200000000000000000000000000000000000015")));
        assert_eq!((tx.mint, tx.value, tx.gas_limit, tx.is_system_transaction), (0, U256::ZERO, 1_000_000, false));
        assert_eq!(tx.hash(), b256!("68736fb400dc3b69ab1c4c2cbe75a600aa7ba7cd8d025797ebd8a0108955c91f"));
        assert_eq!(tx.encoded_2718(), raw);
        assert!(TxDeposit::decode_2718(&raw[..raw.len() - 1]).is_err());
    }
}

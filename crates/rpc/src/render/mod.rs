//! Chain results as geth-shaped JSON text, built with alloy's RPC types. Deviations from
//! what alloy's types can express (a pending block's null hash, `preconfIndex`) are
//! patched on the rendered value, in one place each.

pub mod block;
pub mod events;
pub mod flashblocks;
pub mod log;
pub mod node;
pub mod op;
pub mod proof;
pub mod receipt;
pub mod simulate;
pub mod trace;
pub mod transaction;
pub mod txpool;

use alloy_primitives::B256;
use preconf_chain::types::BlockData;
use serde::Serialize;

/// Renders a value alloy's types already serialize in geth's shape.
pub fn to_json<T: Serialize>(value: &T) -> String {
    // Serializing these types cannot fail: they hold no maps with non-string keys.
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

/// A quantity: `"0x2a"`. Written digit by digit: the formatter's machinery cost more than
/// the read it renders on the event loop.
pub fn quantity<T: Quantity>(v: T) -> String {
    let limbs = v.limbs();
    let limbs = limbs.as_ref();
    let top = limbs.iter().rposition(|&l| l != 0);
    let mut out = String::with_capacity(4 + 16 * limbs.len());
    out.push_str("\"0x");
    match top {
        None => out.push('0'),
        Some(top) => {
            let high = limbs[top];
            push_hex(&mut out, high, (16 - high.leading_zeros() as usize / 4).max(1));
            for &limb in limbs[..top].iter().rev() {
                push_hex(&mut out, limb, 16);
            }
        }
    }
    out.push('"');
    out
}

/// An unsigned integer as little-endian 64-bit limbs.
pub trait Quantity {
    fn limbs(&self) -> impl AsRef<[u64]>;
}

macro_rules! small_quantity {
    ($($t:ty),*) => {$(
        impl Quantity for $t {
            fn limbs(&self) -> impl AsRef<[u64]> {
                [*self as u64]
            }
        }
    )*};
}
small_quantity!(u8, u16, u32, u64, usize);

impl Quantity for u128 {
    fn limbs(&self) -> impl AsRef<[u64]> {
        [*self as u64, (*self >> 64) as u64]
    }
}

impl<const BITS: usize, const LIMBS: usize> Quantity for alloy_primitives::Uint<BITS, LIMBS> {
    fn limbs(&self) -> impl AsRef<[u64]> {
        *self.as_limbs()
    }
}

impl<T: Quantity> Quantity for &T {
    fn limbs(&self) -> impl AsRef<[u64]> {
        (*self).limbs()
    }
}

/// The low `digits` hex digits of `v`, most significant first.
fn push_hex(out: &mut String, v: u64, digits: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for i in (0..digits).rev() {
        out.push(HEX[((v >> (4 * i)) & 0xf) as usize] as char);
    }
}

/// A 32-byte word, zero-padded (eth_getStorageAt).
pub fn word(v: alloy_primitives::U256) -> String {
    let mut out = String::with_capacity(68);
    out.push_str("\"0x");
    for &limb in v.as_limbs().iter().rev() {
        push_hex(&mut out, limb, 16);
    }
    out.push('"');
    out
}

/// Where a transaction sits, for the block-related members of its JSON.
#[derive(Clone, Copy, Debug)]
pub struct TxPosition {
    /// `None` while its block is being built.
    pub block_hash: Option<B256>,
    pub block_number: u64,
    pub block_timestamp: u64,
    pub base_fee: Option<u64>,
    pub index: u64,
}

impl TxPosition {
    pub fn in_block(block: &BlockData, index: usize) -> Self {
        Self {
            block_hash: block.hash,
            block_number: block.header.number,
            block_timestamp: block.header.timestamp,
            base_fee: block.header.base_fee_per_gas,
            index: index as u64,
        }
    }

    /// Receipts and logs of pre-confirmed transactions carry the zero hash: the block has
    /// no hash until it is sealed, and clients such as ethers reject null there.
    pub fn receipt_block_hash(&self) -> B256 {
        self.block_hash.unwrap_or(B256::ZERO)
    }
}

#[cfg(test)]
mod quantity_tests {
    use super::*;
    use alloy_primitives::U256;

    #[test]
    fn quantities_as_the_formatter_writes_them() {
        for v in [0u64, 1, 0xf, 0x10, 0x2a, u32::MAX as u64, u64::MAX, 1 << 63] {
            assert_eq!(quantity(v), format!("\"{v:#x}\""));
            assert_eq!(quantity((v as u128 * 3) << 60), format!("\"{:#x}\"", (v as u128 * 3) << 60));
            let wide = U256::from(v) << 130 | U256::from(v);
            assert_eq!(quantity(wide), format!("\"{wide:#x}\""));
            assert_eq!(quantity(U256::from(v)), format!("\"{v:#x}\""));
            assert_eq!(word(wide), format!("\"{:#x}\"", B256::from(wide)));
        }
        assert_eq!(quantity(U256::MAX), format!("\"{:#x}\"", U256::MAX));
        assert_eq!(quantity(7usize), "\"0x7\"");
    }
}

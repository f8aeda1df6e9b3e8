//! The L1 values an OP block's first transaction (the L1-info deposit) writes into the
//! L1Block predeploy, read from its calldata, and the L1-fee fields op-geth and op-reth add
//! to receipts. op-revm charges the fees from the predeploy's storage during execution; the
//! receipts need the same numbers afterwards, which the calldata gives without a state read.

use alloy_primitives::{B256, U256};
use op_revm::{L1BlockInfo, OpSpecId};

/// `setL1BlockValues(uint64,uint64,uint256,bytes32,uint64,bytes32,uint256,uint256)`: Bedrock's
/// ABI-encoded form.
pub const SELECTOR_BEDROCK: [u8; 4] = [0x01, 0x5d, 0x8e, 0xb9];
/// `setL1BlockValuesEcotone()`: packed fields from Ecotone on.
pub const SELECTOR_ECOTONE: [u8; 4] = [0x44, 0x0a, 0x5e, 0x20];
/// `setL1BlockValuesIsthmus()`: Ecotone's fields, then the operator fee scalar and constant.
pub const SELECTOR_ISTHMUS: [u8; 4] = [0x09, 0x89, 0x99, 0xbe];
/// `setL1BlockValuesJovian()`: Isthmus's fields, then the DA-footprint gas scalar.
pub const SELECTOR_JOVIAN: [u8; 4] = [0x3d, 0xb6, 0xbe, 0x2b];

/// The L1 origin the deposit names, with the fee parameters in op-revm's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct L1Info {
    pub number: u64,
    pub timestamp: u64,
    pub hash: B256,
    pub fees: L1BlockInfo,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum L1InfoError {
    #[error("L1-info calldata has an unknown selector")]
    Selector,
    #[error("L1-info calldata is {have} bytes, the format needs {want}")]
    Length { have: usize, want: usize },
}

fn uint(data: &[u8], at: usize, len: usize) -> U256 {
    U256::from_be_slice(&data[at..at + len])
}

fn u64_at(data: &[u8], at: usize, len: usize) -> u64 {
    uint(data, at, len).saturating_to()
}

impl L1Info {
    /// Reads the calldata of the L1-info deposit, whichever fork's format it has.
    pub fn from_calldata(data: &[u8]) -> Result<Self, L1InfoError> {
        let selector: [u8; 4] = data.get(..4).and_then(|s| s.try_into().ok()).ok_or(L1InfoError::Selector)?;
        let want = match selector {
            SELECTOR_BEDROCK => 4 + 8 * 32,
            SELECTOR_ECOTONE => 164,
            SELECTOR_ISTHMUS => 176,
            SELECTOR_JOVIAN => 178,
            _ => return Err(L1InfoError::Selector),
        };
        if data.len() < want {
            return Err(L1InfoError::Length { have: data.len(), want });
        }
        if selector == SELECTOR_BEDROCK {
            // Eight 32-byte words: number, timestamp, basefee, hash, sequence number,
            // batcher hash, overhead, scalar.
            let word = |i: usize| 4 + 32 * i;
            return Ok(Self {
                number: u64_at(data, word(0), 32),
                timestamp: u64_at(data, word(1), 32),
                hash: B256::from_slice(&data[word(3)..word(3) + 32]),
                fees: L1BlockInfo {
                    l1_base_fee: uint(data, word(2), 32),
                    l1_fee_overhead: Some(uint(data, word(6), 32)),
                    l1_base_fee_scalar: uint(data, word(7), 32),
                    ..Default::default()
                },
            });
        }
        // Packed: base fee scalar u32, blob base fee scalar u32, sequence number u64,
        // timestamp u64, number u64, basefee u256, blob basefee u256, hash, batcher hash.
        let mut fees = L1BlockInfo {
            l1_base_fee_scalar: uint(data, 4, 4),
            l1_blob_base_fee_scalar: Some(uint(data, 8, 4)),
            l1_base_fee: uint(data, 36, 32),
            l1_blob_base_fee: Some(uint(data, 68, 32)),
            ..Default::default()
        };
        if selector != SELECTOR_ECOTONE {
            fees.operator_fee_scalar = Some(uint(data, 164, 4));
            fees.operator_fee_constant = Some(uint(data, 168, 8));
        }
        if selector == SELECTOR_JOVIAN {
            fees.da_footprint_gas_scalar = Some(u64_at(data, 176, 2) as u16);
        }
        Ok(Self {
            timestamp: u64_at(data, 20, 8),
            number: u64_at(data, 28, 8),
            hash: B256::from_slice(&data[100..132]),
            fees,
        })
    }

    /// The fee parameters as op-revm reads them in `spec`: the first Ecotone block's deposit
    /// is still Bedrock's (no Ecotone scalars yet), and op-revm then keeps Bedrock's cost
    /// function.
    pub fn fees_for(&self, spec: OpSpecId) -> L1BlockInfo {
        let mut fees = self.fees.clone();
        fees.empty_ecotone_scalars = spec.is_enabled_in(OpSpecId::ECOTONE) && fees.l1_blob_base_fee_scalar.is_none();
        fees
    }
}

/// The L1-fee fields of a non-deposit receipt, as op-geth and op-reth render them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct L1FeeFields {
    pub l1_fee: U256,
    /// The L1 gas the transaction is charged for: its data gas, plus the overhead before Ecotone.
    pub l1_gas_used: U256,
    pub l1_gas_price: U256,
    /// Before Ecotone: the scalar divided by 1e6, as a decimal string (op-geth's `l1FeeScalar`).
    pub l1_fee_scalar: Option<String>,
    pub l1_base_fee_scalar: Option<U256>,
    pub l1_blob_base_fee: Option<U256>,
    pub l1_blob_base_fee_scalar: Option<U256>,
    /// Reported when either operator-fee parameter is non-zero.
    pub operator_fee_scalar: Option<U256>,
    pub operator_fee_constant: Option<U256>,
    /// Jovian: the block's DA footprint gas scalar and the transaction's DA footprint
    /// (op-geth's receipt `blobGasUsed`).
    pub da_footprint_gas_scalar: Option<u16>,
    pub da_footprint: Option<u64>,
}

/// Jovian: the DA footprint of a non-deposit transaction encoded as `raw` (EIP-2718): its
/// Fjord size estimate (FastLZ, at least 100 bytes) times the block's DA footprint gas scalar.
pub fn da_footprint(raw: &[u8], scalar: u16) -> u64 {
    (op_revm::estimate_tx_compressed_size(raw) / 1_000_000).saturating_mul(scalar as u64)
}

/// The receipt fields of the transaction encoded as `raw` (EIP-2718) under `fees` in `spec`.
pub fn receipt_fields(fees: &L1BlockInfo, raw: &[u8], spec: OpSpecId) -> L1FeeFields {
    // op-revm caches the last cost in the struct: a copy keeps each call independent.
    let mut info = fees.clone();
    info.clear_tx_l1_cost();
    let l1_fee = info.calculate_tx_l1_cost(raw, spec);
    let bedrock_rules = !spec.is_enabled_in(OpSpecId::ECOTONE) || info.empty_ecotone_scalars;
    let data_gas = info.data_gas(raw, spec);
    let mut out = L1FeeFields { l1_fee, l1_gas_price: info.l1_base_fee, ..Default::default() };
    if bedrock_rules {
        out.l1_gas_used = data_gas + info.l1_fee_overhead.unwrap_or_default();
        out.l1_fee_scalar = Some(decimal_millionths(info.l1_base_fee_scalar));
    } else {
        out.l1_gas_used = data_gas;
        out.l1_base_fee_scalar = Some(info.l1_base_fee_scalar);
        out.l1_blob_base_fee = info.l1_blob_base_fee;
        out.l1_blob_base_fee_scalar = info.l1_blob_base_fee_scalar;
    }
    if spec.is_enabled_in(OpSpecId::ISTHMUS) {
        let scalar = info.operator_fee_scalar.unwrap_or_default();
        let constant = info.operator_fee_constant.unwrap_or_default();
        if !scalar.is_zero() || !constant.is_zero() {
            (out.operator_fee_scalar, out.operator_fee_constant) = (Some(scalar), Some(constant));
        }
    }
    // The activation block's deposit is still Isthmus's: no scalar, no fields (as op-geth).
    if let (true, Some(scalar)) = (spec.is_enabled_in(OpSpecId::JOVIAN), info.da_footprint_gas_scalar) {
        out.da_footprint_gas_scalar = Some(scalar);
        out.da_footprint = Some(da_footprint(raw, scalar));
    }
    out
}

/// What op-revm charges a non-deposit transaction (EIP-2718 encoding `raw`) beyond gas and
/// value in block `l2_block`: the L1 data fee and, from Isthmus, the operator fee for its gas
/// limit, with the L1 values read from the L1Block predeploy in `db`, as op-revm reads them
/// when it charges the transaction. A pool admitting on a balance adds it to the cost.
pub fn tx_fee_charge<DB: revm::Database>(
    db: &mut DB,
    l2_block: u64,
    spec: OpSpecId,
    raw: &[u8],
    gas_limit: u64,
) -> Result<U256, DB::Error> {
    let mut info = L1BlockInfo::try_fetch(db, U256::from(l2_block), spec)?;
    // The function op-revm's handler deducts with before the transaction runs.
    Ok(info.tx_cost(raw, U256::from(gas_limit), spec))
}

/// `scalar / 1e6` written as a decimal, without trailing zeros ("0.684", "1", "1.5").
fn decimal_millionths(scalar: U256) -> String {
    let million = U256::from(1_000_000u64);
    let (whole, frac) = (scalar / million, (scalar % million).saturating_to::<u64>());
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:06}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

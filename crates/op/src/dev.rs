//! An OP dev chain (as `anvil --optimism` gives one): the OP fork schedule from genesis, the
//! predeploys an L1-info deposit needs, and that deposit made from fixed L1 values instead
//! of a real L1 origin, so wallets and harnesses see OP fees without an L1 or op-node.

use alloy_primitives::{address, b256, keccak256, Address, Bytes, TxKind, B256, U256};

use crate::config::{Eip1559, OpConfig, OpConfigError, OpForks};
use crate::deposit::TxDeposit;
use crate::l1info::{SELECTOR_ECOTONE, SELECTOR_ISTHMUS, SELECTOR_JOVIAN};
use crate::OpSpecId;

/// The L1Block predeploy: the L1-info deposit writes the L1 values into it, op-revm reads
/// the fee parameters from its storage.
pub const L1_BLOCK: Address = address!("4200000000000000000000000000000000000015");
/// The sender of the L1-info deposit (L1Block accepts its values only from it).
pub const DEPOSITOR: Address = address!("deaddeaddeaddeaddeaddeaddeaddeaddead0001");
/// Where op-revm pays the base fee, the L1 data fee and (Isthmus) the operator fee.
pub const BASE_FEE_VAULT: Address = address!("4200000000000000000000000000000000000019");
pub const L1_FEE_VAULT: Address = address!("420000000000000000000000000000000000001a");
pub const SEQUENCER_FEE_VAULT: Address = address!("4200000000000000000000000000000000000011");

/// The runtime code of L1Block as OP Sepolia ran it under Holocene (the implementation its
/// proxy at `L1_BLOCK` delegated to; from the witness of test/fixtures/op/op-sepolia-holocene
/// block 26207960, code hash `0xc88a313a…1dfd`). The dev chain puts it at `L1_BLOCK`
/// itself, without the proxy: it keeps the values in its own storage either way.
const L1_BLOCK_CODE_HEX: &str = include_str!("l1block_code.hex");

/// The code hash of that Holocene L1Block.
pub const L1_BLOCK_CODE_HASH: B256 = b256!("c88a313aa75dc4fbf0b6850d9f9ae41e04243b7008cf3eadb29256d4a71c1dfd");

/// The runtime code of L1Block as Isthmus deploys it (what op-node's Isthmus upgrade
/// deposit's deployment code returns: upgrades/isthmus-*, the OP specs' copy): it
/// takes Ecotone's and Isthmus's L1-info calldata, keeps the operator fee scalar and
/// constant (slot 8, where op-revm reads them), and has their getters. The dev chain's
/// L1Block, at `L1_BLOCK` itself (no proxy).
const L1_BLOCK_ISTHMUS_CODE_HEX: &str = include_str!("l1block_isthmus_code.hex");

/// Its code hash, as the OP specs' Isthmus derivation page names it.
pub const L1_BLOCK_ISTHMUS_CODE_HASH: B256 = b256!("8e3fe7a416d3e5f3b7be74ddd4e7e58e516fa3f80b67c6d930e3cd7297da4a4b");

/// GasPriceOracle's runtime code as Isthmus deploys it (upgrades/isthmus-*): Fjord's
/// pricing plus `getOperatorFee(gasUsed)` (viem's `estimateOperatorFee`, part of
/// `estimateTotalFee`) once `isIsthmus` is set. The dev chain's oracle.
const GAS_PRICE_ORACLE_ISTHMUS_CODE_HEX: &str = include_str!("gas_price_oracle_isthmus_code.hex");

/// Its code hash, as the OP specs' Isthmus derivation page names it.
pub const GAS_PRICE_ORACLE_ISTHMUS_CODE_HASH: B256 =
    b256!("4d195a9d7caf9fb6d4beaf80de252c626c853afd5868c4f4f8d19c9d301c2679");

/// The GasPriceOracle predeploy: what wallets and viem's `publicActionsL2` (`estimateL1Fee`,
/// `getL1BaseFee`) call to price the L1 data fee.
pub const GAS_PRICE_ORACLE: Address = address!("420000000000000000000000000000000000000F");

/// GasPriceOracle's runtime code as Fjord deployed it (the implementation op-node's Fjord
/// upgrade deposits create at `0xa919…Fac7`): the bytes its deployment code returns, which
/// upgrades/fjord-gas-price-oracle-deployment.txt holds (the OP specs' copy, named
/// in op-node's Fjord upgrade transactions). It prices with Ecotone's scalars and, with
/// `isFjord`, Fjord's FastLZ estimate: op-revm's charge for the dev chain's forks.
const GAS_PRICE_ORACLE_CODE_HEX: &str = include_str!("gas_price_oracle_code.hex");

/// GasPriceOracle's slot 0: `isEcotone` (byte 0) and `isFjord` (byte 1), both set, as the
/// Ecotone and Fjord upgrades' `setEcotone()` and `setFjord()` leave them.
pub const GAS_PRICE_ORACLE_FLAGS: U256 = U256::from_limbs([0x0101, 0, 0, 0]);

/// The same with `isIsthmus` (byte 2), as the Isthmus upgrade's `setIsthmus()` leaves it:
/// the dev chain's oracle.
pub const GAS_PRICE_ORACLE_ISTHMUS_FLAGS: U256 = U256::from_limbs([0x01_0101, 0, 0, 0]);

/// L1Block's runtime code as Jovian deploys it (upgrades/jovian-*, the OP specs'
/// copy of the upgrade deposit's deployment code, bytes 32..): it takes Jovian's L1-info
/// calldata (`setL1BlockValuesJovian`, Isthmus's fields and the DA footprint gas scalar,
/// kept in slot 8 at offset 12 where op-revm reads it) besides Isthmus's.
const L1_BLOCK_JOVIAN_CODE_HEX: &str = include_str!("l1block_jovian_code.hex");

/// Its code hash, as the OP specs' Jovian derivation page names it.
pub const L1_BLOCK_JOVIAN_CODE_HASH: B256 = b256!("5f885ca815d2cf27a203123e50b8ae204fdca910b6995d90b2d7700cbb9240d1");

/// GasPriceOracle's runtime code as Jovian deploys it: with `isJovian` set,
/// `getOperatorFee` prices Jovian's operator fee (gas × scalar × 100 + constant).
const GAS_PRICE_ORACLE_JOVIAN_CODE_HEX: &str = include_str!("gas_price_oracle_jovian_code.hex");

/// Its code hash, as the OP specs' Jovian derivation page names it.
pub const GAS_PRICE_ORACLE_JOVIAN_CODE_HASH: B256 =
    b256!("e9fc7c96c4db0d6078e3d359d7e8c982c350a513cb2c31121adf5e1e8a446614");

/// The same flags with `isJovian` (byte 3), as the Jovian upgrade's `setJovian()` leaves them.
pub const GAS_PRICE_ORACLE_JOVIAN_FLAGS: U256 = U256::from_limbs([0x0101_0101, 0, 0, 0]);

pub fn l1_block_jovian_code() -> Bytes {
    alloy_primitives::hex::decode(L1_BLOCK_JOVIAN_CODE_HEX.trim()).expect("the embedded L1Block code is hex").into()
}

pub fn gas_price_oracle_jovian_code() -> Bytes {
    alloy_primitives::hex::decode(GAS_PRICE_ORACLE_JOVIAN_CODE_HEX.trim())
        .expect("the embedded GasPriceOracle code is hex")
        .into()
}

pub fn gas_price_oracle_isthmus_code() -> Bytes {
    alloy_primitives::hex::decode(GAS_PRICE_ORACLE_ISTHMUS_CODE_HEX.trim())
        .expect("the embedded GasPriceOracle code is hex")
        .into()
}

pub fn l1_block_isthmus_code() -> Bytes {
    alloy_primitives::hex::decode(L1_BLOCK_ISTHMUS_CODE_HEX.trim()).expect("the embedded L1Block code is hex").into()
}

pub fn gas_price_oracle_code() -> Bytes {
    alloy_primitives::hex::decode(GAS_PRICE_ORACLE_CODE_HEX.trim())
        .expect("the embedded GasPriceOracle code is hex")
        .into()
}

/// The L1-info deposit's gas from Regolith on.
pub const L1_INFO_GAS: u64 = 1_000_000;

pub fn l1_block_code() -> Bytes {
    alloy_primitives::hex::decode(L1_BLOCK_CODE_HEX.trim()).expect("the embedded L1Block code is hex").into()
}

/// The last OP fork the dev chain runs from genesis (`--hardfork`, anvil's flag, with
/// `--optimism`). Every fork before it is active from genesis too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DevHardfork {
    #[default]
    Isthmus,
    Jovian,
}

impl DevHardfork {
    /// The fork by the lowercase name op-node and anvil use.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "isthmus" => Some(Self::Isthmus),
            "jovian" => Some(Self::Jovian),
            _ => None,
        }
    }
}

/// What the dev chain's genesis depends on beyond the Ethereum dev chain's: its last fork
/// and (Jovian) the minimum base fee its genesis extraData names, which every later block
/// carries forward as a SystemConfig value would.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DevChain {
    pub hardfork: DevHardfork,
    pub min_base_fee: u64,
}

/// The OP rules of the dev chain: every fork through Isthmus from genesis (as op-geth's and
/// anvil's dev chains default to), OP Mainnet's EIP-1559 parameters.
pub fn dev_config(chain_id: u64) -> OpConfig {
    dev_config_for(chain_id, DevHardfork::Isthmus)
}

/// `dev_config` with every fork through `hardfork` from genesis.
pub fn dev_config_for(chain_id: u64, hardfork: DevHardfork) -> OpConfig {
    let mut config = isthmus_dev_config(chain_id);
    if hardfork == DevHardfork::Jovian {
        config.forks.jovian_time = Some(0);
    }
    config
}

fn isthmus_dev_config(chain_id: u64) -> OpConfig {
    OpConfig {
        chain_id,
        forks: OpForks {
            bedrock_block: Some(0),
            regolith_time: Some(0),
            canyon_time: Some(0),
            delta_time: Some(0),
            ecotone_time: Some(0),
            fjord_time: Some(0),
            granite_time: Some(0),
            holocene_time: Some(0),
            isthmus_time: Some(0),
            jovian_time: None,
        },
        eip1559: Eip1559 { eip1559_elasticity: 6, eip1559_denominator: 50, eip1559_denominator_canyon: Some(250) },
    }
}

/// Makes a genesis in op-geth's format (an Ethereum dev chain's) the OP dev chain's: its
/// config becomes `dev_config`'s (its chain id kept), and the alloc gains L1Block, which
/// the L1-info deposit writes to and op-revm reads its fees from, and GasPriceOracle, both
/// in their Isthmus form, so the L1 and operator fees wallets estimate are the ones op-revm
/// charges. The fee vaults need no code: they only receive.
pub fn optimism_genesis(genesis: &mut serde_json::Value) -> Result<(), OpConfigError> {
    optimism_genesis_for(genesis, DevChain::default())
}

/// `optimism_genesis` for `chain`. With Jovian the predeploys are Jovian's (L1Block takes
/// Jovian's L1-info calldata from block 1, the first block that has one: a chain with
/// Jovian at genesis needs no upgrade transactions) and the genesis extraData is Jovian's
/// (version 1, the EIP-1559 parameters, the minimum base fee), which block 1's base fee
/// reads and the builder carries forward.
pub fn optimism_genesis_for(genesis: &mut serde_json::Value, chain: DevChain) -> Result<(), OpConfigError> {
    let chain_id = genesis["config"]["chainId"].as_u64().ok_or(OpConfigError::Missing("chainId"))?;
    let config = dev_config_for(chain_id, chain.hardfork);
    genesis["config"] = config.genesis_config();
    let (l1_block, oracle, flags) = match chain.hardfork {
        DevHardfork::Isthmus => {
            (l1_block_isthmus_code(), gas_price_oracle_isthmus_code(), GAS_PRICE_ORACLE_ISTHMUS_FLAGS)
        }
        DevHardfork::Jovian => (l1_block_jovian_code(), gas_price_oracle_jovian_code(), GAS_PRICE_ORACLE_JOVIAN_FLAGS),
    };
    if chain.hardfork == DevHardfork::Jovian {
        let (d, e) = config.base_fee_params(0);
        let mut extra = vec![1u8];
        extra.extend_from_slice(&(d as u32).to_be_bytes());
        extra.extend_from_slice(&(e as u32).to_be_bytes());
        extra.extend_from_slice(&chain.min_base_fee.to_be_bytes());
        genesis["extraData"] = serde_json::Value::String(Bytes::from(extra).to_string());
    }
    let alloc = genesis.get_mut("alloc").and_then(|a| a.as_object_mut()).ok_or(OpConfigError::Missing("alloc"))?;
    alloc.insert(L1_BLOCK.to_string(), serde_json::json!({ "balance": "0x0", "code": l1_block.to_string() }));
    alloc.insert(
        GAS_PRICE_ORACLE.to_string(),
        serde_json::json!({
            "balance": "0x0",
            "code": oracle.to_string(),
            "storage": { B256::ZERO.to_string(): B256::from(flags).to_string() },
        }),
    );
    Ok(())
}

/// The L1 values the dev chain's L1-info deposits carry, fixed for the chain's life (the
/// flags set them). The defaults are of the order Base's blocks carry: a 1 gwei L1 base fee,
/// a 1 wei blob base fee, Base's scalars.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevL1Values {
    pub base_fee: U256,
    pub blob_base_fee: U256,
    pub base_fee_scalar: u32,
    pub blob_base_fee_scalar: u32,
    /// The L1 origin: number, timestamp and hash of the (imaginary) L1 block.
    pub number: u64,
    pub timestamp: u64,
    pub hash: B256,
    pub batcher_hash: B256,
    /// Isthmus's operator fee: `gas used × scalar / 1e6 + constant` wei per transaction.
    pub operator_fee_scalar: u32,
    pub operator_fee_constant: u64,
    /// Jovian's DA footprint gas scalar (the SystemConfig's; 0 stands for the default).
    pub da_footprint_gas_scalar: u16,
}

/// The DA footprint gas scalar op-node writes into the deposit when the SystemConfig has 0.
pub const DEFAULT_DA_FOOTPRINT_GAS_SCALAR: u16 = 400;

impl Default for DevL1Values {
    fn default() -> Self {
        Self {
            base_fee: U256::from(1_000_000_000u64),
            blob_base_fee: U256::from(1u64),
            base_fee_scalar: 2269,
            blob_base_fee_scalar: 1_055_762,
            number: 1,
            timestamp: 0,
            hash: keccak256("preconf-node OP dev chain L1 origin"),
            batcher_hash: B256::ZERO,
            operator_fee_scalar: 0,
            operator_fee_constant: 0,
            da_footprint_gas_scalar: 0,
        }
    }
}

impl DevL1Values {
    /// `setL1BlockValuesEcotone()` calldata: the selector, then the packed fields (base fee
    /// scalar u32, blob base fee scalar u32, sequence number u64, timestamp u64, number
    /// u64, base fee, blob base fee, hash, batcher hash).
    pub fn ecotone_calldata(&self, sequence_number: u64) -> Bytes {
        let mut out = Vec::with_capacity(164);
        out.extend_from_slice(&SELECTOR_ECOTONE);
        out.extend_from_slice(&self.base_fee_scalar.to_be_bytes());
        out.extend_from_slice(&self.blob_base_fee_scalar.to_be_bytes());
        out.extend_from_slice(&sequence_number.to_be_bytes());
        out.extend_from_slice(&self.timestamp.to_be_bytes());
        out.extend_from_slice(&self.number.to_be_bytes());
        out.extend_from_slice(&self.base_fee.to_be_bytes::<32>());
        out.extend_from_slice(&self.blob_base_fee.to_be_bytes::<32>());
        out.extend_from_slice(self.hash.as_slice());
        out.extend_from_slice(self.batcher_hash.as_slice());
        out.into()
    }

    /// `setL1BlockValuesIsthmus()` calldata: Ecotone's fields, then the operator fee scalar
    /// (u32) and constant (u64).
    pub fn isthmus_calldata(&self, sequence_number: u64) -> Bytes {
        let mut out = self.ecotone_calldata(sequence_number).to_vec();
        out[..4].copy_from_slice(&SELECTOR_ISTHMUS);
        out.extend_from_slice(&self.operator_fee_scalar.to_be_bytes());
        out.extend_from_slice(&self.operator_fee_constant.to_be_bytes());
        out.into()
    }

    /// `setL1BlockValuesJovian()` calldata: Isthmus's fields, then the DA footprint gas
    /// scalar (u16; the default where the value is 0, as op-node writes it).
    pub fn jovian_calldata(&self, sequence_number: u64) -> Bytes {
        let mut out = self.isthmus_calldata(sequence_number).to_vec();
        out[..4].copy_from_slice(&SELECTOR_JOVIAN);
        out.extend_from_slice(&self.da_footprint_gas_scalar().to_be_bytes());
        out.into()
    }

    /// The DA footprint gas scalar the Jovian deposits carry.
    pub fn da_footprint_gas_scalar(&self) -> u16 {
        match self.da_footprint_gas_scalar {
            0 => DEFAULT_DA_FOOTPRINT_GAS_SCALAR,
            n => n,
        }
    }

    /// The L1-info deposit of a block under `spec`: Jovian's calldata from Jovian on,
    /// Isthmus's from Isthmus, Ecotone's before, whether or not the block is a fork's first
    /// (a chain whose forks all start at genesis, as the dev chain's). The builder picks the
    /// format as op-node does, a fork's first block keeping the previous one: `activation`.
    pub fn l1_info_deposit_at(&self, sequence_number: u64, spec: OpSpecId) -> TxDeposit {
        let mut deposit = self.l1_info_deposit(sequence_number);
        if spec.is_enabled_in(OpSpecId::JOVIAN) {
            deposit.input = self.jovian_calldata(sequence_number);
        } else if spec.is_enabled_in(OpSpecId::ISTHMUS) {
            deposit.input = self.isthmus_calldata(sequence_number);
        }
        deposit
    }

    /// The L1-info deposit that opens an L2 block (Ecotone's calldata): the
    /// `sequence_number`-th L2 block of this L1 origin. Its source hash is the L1-info domain's (1): keccak(1 ‖ keccak(L1 hash ‖
    /// sequence number)), so each block's deposit has its own hash.
    pub fn l1_info_deposit(&self, sequence_number: u64) -> TxDeposit {
        let inner = keccak256([self.hash.as_slice(), &U256::from(sequence_number).to_be_bytes::<32>()].concat());
        let source_hash = keccak256([U256::from(1u64).to_be_bytes::<32>().as_slice(), inner.as_slice()].concat());
        TxDeposit {
            source_hash,
            from: DEPOSITOR,
            to: TxKind::Call(L1_BLOCK),
            mint: 0,
            value: U256::ZERO,
            gas_limit: L1_INFO_GAS,
            is_system_transaction: false,
            input: self.ecotone_calldata(sequence_number),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::l1info::L1Info;

    #[test]
    fn embedded_l1_block_code_is_the_named_one() {
        assert_eq!(keccak256(l1_block_code()), L1_BLOCK_CODE_HASH);
    }

    /// The Isthmus codes are what the specs' deployment codes return (bytes 32.. of each,
    /// after a constructor that copies and returns them) and hash as the specs name them.
    #[test]
    fn isthmus_codes_are_the_deployed_ones() {
        let deployed =
            |text: &str| -> Bytes { alloy_primitives::hex::decode(text.trim()).unwrap()[32..].to_vec().into() };
        let l1_block = include_str!("upgrades/isthmus-l1-block-deployment.txt");
        let oracle = include_str!("upgrades/isthmus-gas-price-oracle-deployment.txt");
        assert_eq!(deployed(l1_block), l1_block_isthmus_code());
        assert_eq!(deployed(oracle), gas_price_oracle_isthmus_code());
        assert_eq!(keccak256(l1_block_isthmus_code()), L1_BLOCK_ISTHMUS_CODE_HASH);
        assert_eq!(keccak256(gas_price_oracle_isthmus_code()), GAS_PRICE_ORACLE_ISTHMUS_CODE_HASH);
    }

    #[test]
    fn isthmus_calldata_reads_back() {
        let values = DevL1Values { operator_fee_scalar: 7, operator_fee_constant: 9, ..Default::default() };
        let calldata = values.isthmus_calldata(3);
        assert_eq!(calldata.len(), 176);
        let info = L1Info::from_calldata(&calldata).unwrap();
        assert_eq!(info.fees.operator_fee_scalar, Some(U256::from(7)));
        assert_eq!(info.fees.operator_fee_constant, Some(U256::from(9)));
        assert_eq!(values.l1_info_deposit_at(3, OpSpecId::ISTHMUS).input, calldata);
        assert_eq!(values.l1_info_deposit_at(3, OpSpecId::HOLOCENE).input, values.ecotone_calldata(3));
    }

    /// The Jovian codes are what the specs' deployment codes return and hash as the specs
    /// name them.
    #[test]
    fn jovian_codes_are_the_deployed_ones() {
        let deployed =
            |text: &str| -> Bytes { alloy_primitives::hex::decode(text.trim()).unwrap()[32..].to_vec().into() };
        let l1_block = include_str!("upgrades/jovian-l1-block-deployment.txt");
        let oracle = include_str!("upgrades/jovian-gas-price-oracle-deployment.txt");
        assert_eq!(deployed(l1_block), l1_block_jovian_code());
        assert_eq!(deployed(oracle), gas_price_oracle_jovian_code());
        assert_eq!(keccak256(l1_block_jovian_code()), L1_BLOCK_JOVIAN_CODE_HASH);
        assert_eq!(keccak256(gas_price_oracle_jovian_code()), GAS_PRICE_ORACLE_JOVIAN_CODE_HASH);
    }

    #[test]
    fn jovian_calldata_reads_back() {
        let values = DevL1Values { operator_fee_scalar: 7, ..Default::default() };
        let calldata = values.jovian_calldata(3);
        assert_eq!(calldata.len(), 178);
        let info = L1Info::from_calldata(&calldata).unwrap();
        assert_eq!(info.fees.da_footprint_gas_scalar, Some(400), "0 stands for the default");
        assert_eq!(info.fees.operator_fee_scalar, Some(U256::from(7)));
        assert_eq!(values.l1_info_deposit_at(3, OpSpecId::JOVIAN).input, calldata);
        let set = DevL1Values { da_footprint_gas_scalar: 1234, ..values };
        assert_eq!(L1Info::from_calldata(&set.jovian_calldata(3)).unwrap().fees.da_footprint_gas_scalar, Some(1234));
    }

    #[test]
    fn a_jovian_dev_genesis() {
        let mut genesis = serde_json::json!({ "config": { "chainId": 1337 }, "alloc": {} });
        let chain = DevChain { hardfork: DevHardfork::Jovian, min_base_fee: 0x0102 };
        optimism_genesis_for(&mut genesis, chain).unwrap();
        let config = OpConfig::from_genesis_config(&genesis["config"]).unwrap().unwrap();
        assert_eq!(config.spec_at(0), OpSpecId::JOVIAN);
        assert_eq!(genesis["extraData"], "0x01000000fa000000060000000000000102");
        let accounts = crate::genesis::alloc(&genesis).unwrap();
        let l1_block = accounts.iter().find(|a| a.address == L1_BLOCK).unwrap();
        assert_eq!(keccak256(&l1_block.code), L1_BLOCK_JOVIAN_CODE_HASH);
    }

    #[test]
    fn ecotone_calldata_reads_back() {
        let values = DevL1Values { number: 7, timestamp: 1_700_000_000, ..Default::default() };
        let info = L1Info::from_calldata(&values.ecotone_calldata(3)).unwrap();
        assert_eq!((info.number, info.timestamp, info.hash), (7, 1_700_000_000, values.hash));
        assert_eq!(info.fees.l1_base_fee, values.base_fee);
        assert_eq!(info.fees.l1_blob_base_fee, Some(values.blob_base_fee));
        assert_eq!(info.fees.l1_base_fee_scalar, U256::from(2269));
        assert_eq!(info.fees.l1_blob_base_fee_scalar, Some(U256::from(1_055_762)));
    }

    #[test]
    fn an_ethereum_genesis_becomes_the_op_dev_chain() {
        let mut genesis = serde_json::json!({
            "config": { "chainId": 1337, "londonBlock": 0, "pragueTime": 0 },
            "alloc": { "0x0000000000000000000000000000000000000001": { "balance": "0x1" } },
        });
        optimism_genesis(&mut genesis).unwrap();
        let config = OpConfig::from_genesis_config(&genesis["config"]).unwrap().unwrap();
        assert_eq!(config, dev_config(1337));
        assert_eq!(config.spec_at(0), op_revm::OpSpecId::ISTHMUS);
        assert_eq!(genesis["config"]["pragueTime"], 0, "Prague comes with Isthmus");
        let accounts = crate::genesis::alloc(&genesis).unwrap();
        let l1_block = accounts.iter().find(|a| a.address == L1_BLOCK).unwrap();
        assert_eq!(keccak256(&l1_block.code), L1_BLOCK_ISTHMUS_CODE_HASH);
        let oracle = accounts.iter().find(|a| a.address == GAS_PRICE_ORACLE).unwrap();
        assert_eq!(keccak256(&oracle.code), GAS_PRICE_ORACLE_ISTHMUS_CODE_HASH);
        assert_eq!(oracle.storage, vec![(B256::ZERO, GAS_PRICE_ORACLE_ISTHMUS_FLAGS)]);
        assert_eq!(accounts.len(), 3);
    }

    #[test]
    fn each_block_has_its_own_deposit_hash() {
        let values = DevL1Values::default();
        assert_ne!(values.l1_info_deposit(0).hash(), values.l1_info_deposit(1).hash());
    }
}

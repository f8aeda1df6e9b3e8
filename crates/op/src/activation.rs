//! How a block on the builder's own clock opens, as op-node's derivation opens it: the
//! L1-info deposit, in the format the chain's L1Block takes at that block, then the upgrade
//! deposits of every fork whose first block it is (op-node's order: Ecotone, Fjord, Isthmus,
//! Jovian). A fork's first block is the one whose parent predates the fork.
//!
//! A fork's first block still writes the previous format: its L1Block is upgraded by that
//! very block, after the deposit ran. So where every fork activates in one block (Base's
//! genesis on a current clock), that block's deposit is Bedrock's.

use alloy_primitives::{Address, Bytes, U256};

use crate::config::OpConfig;
use crate::deposit::TxDeposit;
use crate::dev::DevL1Values;
use crate::l1info::SELECTOR_BEDROCK;
use crate::upgrades::{self, UPGRADE_FORKS};
use crate::OpSpecId;

/// Before Regolith the L1-info deposit is a system transaction with op-node's fixed gas.
const PRE_REGOLITH_GAS: u64 = 150_000_000;

/// The L1-info deposit's calldata format (`setL1BlockValues*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L1InfoFormat {
    Bedrock,
    Ecotone,
    Isthmus,
    Jovian,
}

impl L1InfoFormat {
    /// The format of the block at `timestamp` after one at `parent_timestamp`: the last
    /// fork that is active and whose first block this is not.
    pub fn of(config: &OpConfig, timestamp: u64, parent_timestamp: u64) -> Self {
        let settled = |fork| config.is_active(fork, timestamp) && config.is_active(fork, parent_timestamp);
        if settled(OpSpecId::JOVIAN) {
            Self::Jovian
        } else if settled(OpSpecId::ISTHMUS) {
            Self::Isthmus
        } else if settled(OpSpecId::ECOTONE) {
            Self::Ecotone
        } else {
            Self::Bedrock
        }
    }
}

/// What a block on the builder's own clock opens with.
pub struct Opening {
    /// The L1-info deposit, then the upgrade deposits.
    pub deposits: Vec<TxDeposit>,
    /// The block takes no pool transactions: op-node's sequencer sets `noTxPool` in the first
    /// blocks of Ecotone, Fjord, Isthmus and Jovian, so fees do not change mid-block.
    pub no_tx_pool: bool,
}

/// The forks whose first block is the one at `timestamp` after `parent_timestamp` and that
/// bring upgrade deposits, in op-node's order.
pub fn upgrades_at(config: &OpConfig, timestamp: u64, parent_timestamp: u64) -> Vec<OpSpecId> {
    UPGRADE_FORKS.into_iter().filter(|&fork| config.is_first_block_of(fork, timestamp, parent_timestamp)).collect()
}

impl DevL1Values {
    /// `setL1BlockValues()` calldata (Bedrock's ABI-encoded words: number, timestamp, base
    /// fee, hash, sequence number, batcher hash, overhead, scalar). The dev chain's
    /// SystemConfig is a pre-Ecotone one: no overhead, the base fee scalar as its scalar.
    pub fn bedrock_calldata(&self, sequence_number: u64) -> Bytes {
        let mut out = Vec::with_capacity(4 + 8 * 32);
        out.extend_from_slice(&SELECTOR_BEDROCK);
        let words = [
            U256::from(self.number),
            U256::from(self.timestamp),
            self.base_fee,
            self.hash.into(),
            U256::from(sequence_number),
            self.batcher_hash.into(),
            U256::ZERO,
            U256::from(self.base_fee_scalar),
        ];
        words.iter().for_each(|w| out.extend_from_slice(&w.to_be_bytes::<32>()));
        out.into()
    }

    /// The L1-info deposit in `format`; before Regolith a system transaction, as op-node
    /// writes it then.
    pub fn l1_info_deposit_as(&self, sequence_number: u64, format: L1InfoFormat, regolith: bool) -> TxDeposit {
        let mut deposit = self.l1_info_deposit(sequence_number);
        deposit.input = match format {
            L1InfoFormat::Bedrock => self.bedrock_calldata(sequence_number),
            L1InfoFormat::Ecotone => self.ecotone_calldata(sequence_number),
            L1InfoFormat::Isthmus => self.isthmus_calldata(sequence_number),
            L1InfoFormat::Jovian => self.jovian_calldata(sequence_number),
        };
        if !regolith {
            (deposit.is_system_transaction, deposit.gas_limit) = (true, PRE_REGOLITH_GAS);
        }
        deposit
    }

    /// What block `number` at `timestamp`, after its parent at `parent_timestamp`, opens with.
    pub fn opening(&self, config: &OpConfig, number: u64, timestamp: u64, parent_timestamp: u64) -> Opening {
        let format = L1InfoFormat::of(config, timestamp, parent_timestamp);
        let regolith = config.is_active(OpSpecId::REGOLITH, timestamp);
        let forks = upgrades_at(config, timestamp, parent_timestamp);
        let mut deposits = vec![self.l1_info_deposit_as(number, format, regolith)];
        deposits.extend(forks.iter().flat_map(|&fork| upgrades::deposits(fork)));
        Opening { deposits, no_tx_pool: !forks.is_empty() }
    }
}

/// The first fork after `timestamp` whose upgrade deposits give a predeploy a new
/// implementation where `has_proxy` finds no proxy (no ERC-1967 admin), by name (`ecotone` …), with that predeploy: the builder cannot upgrade it. A chain
/// whose forks are all active by `timestamp` (the OP dev chain's, whose predeploys are not
/// proxied) needs none.
pub fn unproxied_upgrade(
    config: &OpConfig,
    timestamp: u64,
    mut has_proxy: impl FnMut(Address) -> bool,
) -> Option<(&'static str, Address)> {
    let to_come = |time: Option<u64>| time.is_some_and(|t| t > timestamp);
    config.forks.times().into_iter().filter(|(_, time, _)| to_come(*time)).find_map(|(name, _, spec)| {
        let fork = spec?;
        upgrades::proxied(fork).iter().find(|&&a| !has_proxy(a)).map(|&a| (name, a))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dev::{dev_config_for, DevHardfork};
    use crate::l1info::L1Info;

    /// Ecotone at 4, Fjord at 6, Isthmus at 8, Jovian at 10.
    fn staggered() -> OpConfig {
        let mut config = dev_config_for(7, DevHardfork::Jovian);
        let f = &mut config.forks;
        (f.canyon_time, f.delta_time, f.ecotone_time, f.fjord_time) = (Some(2), Some(2), Some(4), Some(6));
        (f.granite_time, f.holocene_time, f.isthmus_time, f.jovian_time) = (Some(6), Some(6), Some(8), Some(10));
        config
    }

    /// Each fork's first block keeps the previous format and carries the fork's upgrades;
    /// one block past all of them at once carries them all, in order, after a Bedrock deposit.
    #[test]
    fn formats_and_upgrades_by_block() {
        let config = staggered();
        let values = DevL1Values::default();
        let cases = [
            (2, 0, L1InfoFormat::Bedrock, 0, false),
            (4, 2, L1InfoFormat::Bedrock, 6, true),
            (6, 4, L1InfoFormat::Ecotone, 3, true),
            (8, 6, L1InfoFormat::Ecotone, 8, true),
            (10, 8, L1InfoFormat::Isthmus, 5, true),
            (12, 10, L1InfoFormat::Jovian, 0, false),
            (12, 0, L1InfoFormat::Bedrock, 22, true),
        ];
        for (timestamp, parent, format, upgrades, no_tx_pool) in cases {
            assert_eq!(L1InfoFormat::of(&config, timestamp, parent), format, "at {timestamp}");
            let opening = values.opening(&config, 1, timestamp, parent);
            assert_eq!(opening.deposits.len(), 1 + upgrades, "at {timestamp}");
            assert_eq!(opening.no_tx_pool, no_tx_pool, "at {timestamp}");
        }
        let all = values.opening(&config, 1, 12, 0).deposits;
        let want: Vec<TxDeposit> = UPGRADE_FORKS.into_iter().flat_map(upgrades::deposits).collect();
        assert_eq!(all[1..], want[..]);
    }

    #[test]
    fn bedrock_calldata_reads_back() {
        let values = DevL1Values { number: 7, timestamp: 9, ..Default::default() };
        let calldata = values.bedrock_calldata(3);
        assert_eq!(calldata.len(), 260);
        let info = L1Info::from_calldata(&calldata).unwrap();
        assert_eq!((info.number, info.timestamp, info.hash), (7, 9, values.hash));
        assert_eq!(info.fees.l1_base_fee_scalar, U256::from(values.base_fee_scalar));
        assert_eq!(info.fees.l1_fee_overhead, Some(U256::ZERO));
    }

    #[test]
    fn before_regolith_the_deposit_is_a_system_transaction() {
        let deposit = DevL1Values::default().l1_info_deposit_as(1, L1InfoFormat::Bedrock, false);
        assert!(deposit.is_system_transaction);
        assert_eq!(deposit.gas_limit, PRE_REGOLITH_GAS);
    }

    /// A fork still to come needs proxies at what it upgrades; forks already active need none.
    #[test]
    fn upgrades_need_proxies() {
        let config = staggered();
        let none = |_| false;
        assert_eq!(unproxied_upgrade(&config, 0, none), Some(("ecotone", crate::dev::L1_BLOCK)));
        assert_eq!(unproxied_upgrade(&config, 10, none), None);
        assert_eq!(
            unproxied_upgrade(&config, 6, |a| a != upgrades::OPERATOR_FEE_VAULT),
            Some(("isthmus", upgrades::OPERATOR_FEE_VAULT))
        );
        assert_eq!(unproxied_upgrade(&config, 0, |_| true), None);
    }
}

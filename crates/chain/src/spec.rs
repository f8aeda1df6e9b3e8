//! Chain rules: which fork is active at a given block, fee parameters.

use alloy_consensus::{Header, EMPTY_ROOT_HASH};
use alloy_eips::{eip1559::BaseFeeParams, eip7685::EMPTY_REQUESTS_HASH, eip7840::BlobParams};
use alloy_genesis::Genesis;
use alloy_primitives::B256;
use preconf_op::OpConfig;
use revm::primitives::hardfork::SpecId;

/// The rules of the chain, derived from its genesis file.
#[derive(Clone, Debug)]
pub struct ChainSpec {
    pub genesis: Genesis,
    /// An OP Stack chain's rules (its genesis config has an `optimism` section): the seam
    /// through which crates/op plugs in. `None`: an Ethereum chain.
    op: Option<OpConfig>,
}

impl ChainSpec {
    pub fn new(genesis: Genesis) -> Self {
        // The genesis reader refuses a malformed `optimism` section (`op_config_of`), so a
        // spec built from a read genesis loses nothing here.
        let op = op_config_of(&genesis).ok().flatten();
        Self { genesis, op }
    }

    /// The OP Stack rules when the chain is an OP chain.
    pub fn op(&self) -> Option<&OpConfig> {
        self.op.as_ref()
    }

    pub fn chain_id(&self) -> u64 {
        self.genesis.config.chain_id
    }

    /// The EVM rules in force for a block with this number and timestamp.
    pub fn spec_at(&self, number: u64, timestamp: u64) -> SpecId {
        let c = &self.genesis.config;
        let at_time = |fork: Option<u64>| fork.is_some_and(|t| timestamp >= t);
        let at_block = |fork: Option<u64>| fork.is_some_and(|b| number >= b);
        if at_time(c.amsterdam_time) {
            SpecId::AMSTERDAM
        } else if at_time(c.osaka_time) {
            SpecId::OSAKA
        } else if at_time(c.prague_time) {
            SpecId::PRAGUE
        } else if at_time(c.cancun_time) {
            SpecId::CANCUN
        } else if at_time(c.shanghai_time) {
            SpecId::SHANGHAI
        } else if self.is_merged(number) {
            SpecId::MERGE
        } else if at_block(c.london_block) {
            SpecId::LONDON
        } else if at_block(c.berlin_block) {
            SpecId::BERLIN
        } else if at_block(c.istanbul_block) {
            SpecId::ISTANBUL
        } else if at_block(c.petersburg_block) || at_block(c.constantinople_block) {
            SpecId::PETERSBURG
        } else if at_block(c.byzantium_block) {
            SpecId::BYZANTIUM
        } else if at_block(c.eip158_block) {
            SpecId::SPURIOUS_DRAGON
        } else if at_block(c.eip150_block) {
            SpecId::TANGERINE
        } else if at_block(c.homestead_block) {
            SpecId::HOMESTEAD
        } else {
            SpecId::FRONTIER
        }
    }

    /// Proof-of-stake rules (no difficulty, PREVRANDAO) from this block on.
    pub fn is_merged(&self, number: u64) -> bool {
        let c = &self.genesis.config;
        c.terminal_total_difficulty_passed
            || c.terminal_total_difficulty.is_some_and(|ttd| ttd.is_zero())
            || c.merge_netsplit_block.is_some_and(|b| number >= b)
    }

    pub fn is_london(&self, number: u64) -> bool {
        self.genesis.config.london_block.is_some_and(|b| number >= b)
    }

    pub fn is_shanghai(&self, timestamp: u64) -> bool {
        self.genesis.config.shanghai_time.is_some_and(|t| timestamp >= t)
    }

    pub fn is_cancun(&self, timestamp: u64) -> bool {
        self.genesis.config.cancun_time.is_some_and(|t| timestamp >= t)
    }

    pub fn is_prague(&self, timestamp: u64) -> bool {
        self.genesis.config.prague_time.is_some_and(|t| timestamp >= t)
    }

    pub fn is_osaka(&self, timestamp: u64) -> bool {
        self.genesis.config.osaka_time.is_some_and(|t| timestamp >= t)
    }

    /// The EVM rules for an existing header. As geth does, a header with difficulty 0 after
    /// London runs under the Merge rules (PREVRANDAO) whatever `is_merged` says: a chain
    /// that merged by total difficulty alone has no block number for the Merge in its config.
    pub fn spec_for_header(&self, header: &Header) -> SpecId {
        let spec_id = self.spec_at(header.number, header.timestamp);
        if spec_id == SpecId::LONDON && header.difficulty.is_zero() {
            SpecId::MERGE
        } else if spec_id == SpecId::MERGE && !header.difficulty.is_zero() {
            SpecId::LONDON
        } else {
            spec_id
        }
    }

    /// The blob parameters (target, max, base-fee update fraction, EIP-7918 base cost) in
    /// force at `timestamp`, from the genesis `blobSchedule`: the named fork's entry, or the
    /// latest blob-parameter-only fork (`bpo1Time`…`bpo5Time`) once Osaka is active.
    /// `None` before Cancun.
    pub fn blob_params_at(&self, timestamp: u64) -> Option<BlobParams> {
        if !self.is_cancun(timestamp) {
            return None;
        }
        let schedule = self.genesis.config.blob_schedule_blob_params();
        Some(if self.is_osaka(timestamp) {
            schedule.active_scheduled_params_at_timestamp(timestamp).copied().unwrap_or(schedule.osaka)
        } else if self.is_prague(timestamp) {
            schedule.prague
        } else {
            schedule.cancun
        })
    }

    /// Sets the header fields each fork adds, for the forks active at the header's
    /// timestamp, before any transaction: empty withdrawals and requests, no blob gas used.
    /// The one place a block header gets them (genesis, the builder, simulated blocks).
    pub fn set_fork_fields(&self, header: &mut Header, excess_blob_gas: u64, parent_beacon_block_root: B256) {
        let timestamp = header.timestamp;
        if self.is_shanghai(timestamp) {
            header.withdrawals_root = Some(EMPTY_ROOT_HASH);
        }
        if self.is_cancun(timestamp) {
            header.blob_gas_used = Some(0);
            header.excess_blob_gas = Some(excess_blob_gas);
            header.parent_beacon_block_root = Some(parent_beacon_block_root);
        }
        if self.is_prague(timestamp) {
            header.requests_hash = Some(EMPTY_REQUESTS_HASH);
        }
    }

    pub fn base_fee_params(&self) -> BaseFeeParams {
        BaseFeeParams::ethereum()
    }
}

/// The OP config of op-geth's genesis format (`config.optimism` and the OP fork fields,
/// which alloy keeps among the config's extra fields); `None` for an Ethereum chain.
pub fn op_config_of(genesis: &Genesis) -> Result<Option<OpConfig>, preconf_op::config::OpConfigError> {
    if !genesis.config.extra_fields.contains_key("optimism") {
        return Ok(None);
    }
    let config = serde_json::to_value(&genesis.config)?;
    OpConfig::from_genesis_config(&config)
}

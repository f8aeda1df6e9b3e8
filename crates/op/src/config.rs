//! An OP chain's config: its EIP-1559 parameters and the times its OP forks activate. Read
//! from op-geth's genesis (`config.optimism` and the `*Time` fields beside the Ethereum
//! ones) or, where the genesis has none (the superchain registry publishes `config: null`),
//! from op-node's rollup.json.

use op_revm::OpSpecId;
use serde::Deserialize;

/// The OP fork activations. Bedrock is a block number (a chain that started as Bedrock has
/// 0); the others are timestamps. `None`: not scheduled.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpForks {
    pub bedrock_block: Option<u64>,
    pub regolith_time: Option<u64>,
    pub canyon_time: Option<u64>,
    pub delta_time: Option<u64>,
    pub ecotone_time: Option<u64>,
    pub fjord_time: Option<u64>,
    pub granite_time: Option<u64>,
    pub holocene_time: Option<u64>,
    pub isthmus_time: Option<u64>,
    pub jovian_time: Option<u64>,
}

impl OpForks {
    /// The schedule from each timed fork's activation looked up by name (`regolith` …
    /// `jovian`: the registry's `[hardforks] <name>_time` and rollup.json's `<name>_time`),
    /// Bedrock at block `bedrock_block`. A chain that names no Regolith has it from genesis,
    /// as op-geth sets it for the registry's chains.
    pub fn from_times(bedrock_block: u64, time: impl Fn(&str) -> Option<u64>) -> Self {
        Self {
            bedrock_block: Some(bedrock_block),
            regolith_time: time("regolith").or(Some(0)),
            canyon_time: time("canyon"),
            delta_time: time("delta"),
            ecotone_time: time("ecotone"),
            fjord_time: time("fjord"),
            granite_time: time("granite"),
            holocene_time: time("holocene"),
            isthmus_time: time("isthmus"),
            jovian_time: time("jovian"),
        }
    }

    /// Every timed fork in activation order: its name (as `from_times` takes it; op-geth
    /// spells the field `<name>Time`), its activation, and op-revm's rules for it (Delta
    /// changed only derivation: none).
    pub fn times(&self) -> [(&'static str, Option<u64>, Option<OpSpecId>); 9] {
        [
            ("regolith", self.regolith_time, Some(OpSpecId::REGOLITH)),
            ("canyon", self.canyon_time, Some(OpSpecId::CANYON)),
            ("delta", self.delta_time, None),
            ("ecotone", self.ecotone_time, Some(OpSpecId::ECOTONE)),
            ("fjord", self.fjord_time, Some(OpSpecId::FJORD)),
            ("granite", self.granite_time, Some(OpSpecId::GRANITE)),
            ("holocene", self.holocene_time, Some(OpSpecId::HOLOCENE)),
            ("isthmus", self.isthmus_time, Some(OpSpecId::ISTHMUS)),
            ("jovian", self.jovian_time, Some(OpSpecId::JOVIAN)),
        ]
    }
}

/// op-geth's `config.optimism`: the EIP-1559 elasticity and denominators (Canyon changed
/// the denominator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Eip1559 {
    pub eip1559_elasticity: u64,
    pub eip1559_denominator: u64,
    pub eip1559_denominator_canyon: Option<u64>,
}

/// Everything OP about a chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpConfig {
    pub chain_id: u64,
    pub forks: OpForks,
    pub eip1559: Eip1559,
}

#[derive(Debug, thiserror::Error)]
pub enum OpConfigError {
    #[error("the genesis config has no `optimism` section")]
    NotOp,
    #[error("cannot read the OP config: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the rollup config names no {0}")]
    Missing(&'static str),
}

impl OpConfig {
    /// From op-geth's genesis `config` object: `None` when it is an Ethereum chain's.
    pub fn from_genesis_config(config: &serde_json::Value) -> Result<Option<Self>, OpConfigError> {
        let Some(optimism) = config.get("optimism") else { return Ok(None) };
        let eip1559: Eip1559 = serde_json::from_value(optimism.clone())?;
        let forks: OpForks = serde_json::from_value(config.clone())?;
        let chain_id = config.get("chainId").and_then(|v| v.as_u64()).ok_or(OpConfigError::Missing("chainId"))?;
        Ok(Some(Self { chain_id, forks, eip1559 }))
    }

    /// From op-node's (or kona's) rollup.json: `l2_chain_id`, the `*_time` forks and
    /// `chain_op_config`. op-node's configs have no Bedrock block: the L2 genesis is Bedrock.
    pub fn from_rollup_json(rollup: &serde_json::Value) -> Result<Self, OpConfigError> {
        let time = |name: &str| rollup.get(name).and_then(|v| v.as_u64());
        let op = rollup.get("chain_op_config").ok_or(OpConfigError::Missing("chain_op_config"))?;
        let num = |name: &'static str| op.get(name).and_then(|v| v.as_u64()).ok_or(OpConfigError::Missing(name));
        Ok(Self {
            chain_id: rollup
                .get("l2_chain_id")
                .and_then(|v| v.as_u64())
                .ok_or(OpConfigError::Missing("l2_chain_id"))?,
            forks: OpForks::from_times(0, |fork| time(&format!("{fork}_time"))),
            eip1559: Eip1559 {
                eip1559_elasticity: num("eip1559Elasticity")?,
                eip1559_denominator: num("eip1559Denominator")?,
                eip1559_denominator_canyon: op.get("eip1559DenominatorCanyon").and_then(|v| v.as_u64()),
            },
        })
    }

    /// The OP rules in force at `timestamp` (every OP block is at or after Bedrock).
    pub fn spec_at(&self, timestamp: u64) -> OpSpecId {
        let active = |time: Option<u64>| time.is_some_and(|t| timestamp >= t);
        self.forks
            .times()
            .into_iter()
            .rev()
            .find_map(|(_, time, spec)| spec.filter(|_| active(time)))
            .unwrap_or(OpSpecId::BEDROCK)
    }

    pub fn is_active(&self, fork: OpSpecId, timestamp: u64) -> bool {
        self.spec_at(timestamp).is_enabled_in(fork)
    }

    /// The first block of `fork` is the one whose parent predates it.
    pub fn is_first_block_of(&self, fork: OpSpecId, timestamp: u64, parent_timestamp: u64) -> bool {
        self.is_active(fork, timestamp) && !self.is_active(fork, parent_timestamp)
    }

    /// The EIP-1559 (denominator, elasticity) from the config: Canyon's denominator from Canyon on.
    pub fn base_fee_params(&self, timestamp: u64) -> (u64, u64) {
        let e = &self.eip1559;
        let denominator = match e.eip1559_denominator_canyon {
            Some(d) if self.is_active(OpSpecId::CANYON, timestamp) => d,
            _ => e.eip1559_denominator,
        };
        (denominator, e.eip1559_elasticity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_geth_genesis_config() {
        let config = serde_json::json!({
            "chainId": 10, "bedrockBlock": 105235063, "regolithTime": 0, "canyonTime": 1704992401,
            "ecotoneTime": 1710374401, "holoceneTime": 1736445601,
            "optimism": { "eip1559Elasticity": 6, "eip1559Denominator": 50, "eip1559DenominatorCanyon": 250 }
        });
        let op = OpConfig::from_genesis_config(&config).unwrap().unwrap();
        assert_eq!(op.forks.bedrock_block, Some(105235063));
        assert_eq!(op.spec_at(1704992400), OpSpecId::REGOLITH);
        assert_eq!(op.spec_at(1704992401), OpSpecId::CANYON);
        assert_eq!(op.spec_at(1736445601), OpSpecId::HOLOCENE);
        assert_eq!(op.base_fee_params(0), (50, 6));
        assert_eq!(op.base_fee_params(1704992401), (250, 6));
        assert!(OpConfig::from_genesis_config(&serde_json::json!({"chainId": 1})).unwrap().is_none());
    }
}

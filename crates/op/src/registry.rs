//! The superchain registry's chain TOML (`superchain/configs/<network>/<chain>.toml`): the
//! chain config for genesis files the registry publishes with `config: null`. Only the
//! integer keys the node needs are read (`chain_id`, `[hardforks]`, `[optimism]`,
//! `[genesis.l2] number`), so a small line reader does instead of a TOML dependency.
//!
//! As op-geth does for registry chains, Bedrock is the L2 genesis block and Regolith is
//! active from genesis; forks this node does not know yet (`karst_time`) are left out.

use std::collections::HashMap;

use crate::config::{Eip1559, OpConfig, OpConfigError, OpForks};

/// `section.key` → integer, for every `key = <integer>` line (comments stripped).
fn integers(text: &str) -> HashMap<String, u64> {
    let mut section = String::new();
    let mut out = HashMap::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.trim().to_string();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        if let Ok(n) = value.trim().replace('_', "").parse::<u64>() {
            let key = key.trim();
            out.insert(if section.is_empty() { key.to_string() } else { format!("{section}.{key}") }, n);
        }
    }
    out
}

impl OpConfig {
    pub fn from_registry_toml(text: &str) -> Result<Self, OpConfigError> {
        let values = integers(text);
        let get = |key: &str| values.get(key).copied();
        let need = |key: &'static str| get(key).ok_or(OpConfigError::Missing(key));
        Ok(Self {
            chain_id: need("chain_id")?,
            forks: OpForks::from_times(get("genesis.l2.number").unwrap_or(0), |fork| {
                get(&format!("hardforks.{fork}_time"))
            }),
            eip1559: Eip1559 {
                eip1559_elasticity: need("optimism.eip1559_elasticity")?,
                eip1559_denominator: need("optimism.eip1559_denominator")?,
                eip1559_denominator_canyon: get("optimism.eip1559_denominator_canyon"),
            },
        })
    }

    /// op-geth's genesis `config` for this chain: the Ethereum forks an OP chain runs (every
    /// block-numbered fork through London at Bedrock, proof of stake from genesis, Shanghai
    /// with Canyon, Cancun with Ecotone, Prague with Isthmus), the OP fork times and the
    /// `optimism` section. What a genesis with `config: null` is read with.
    pub fn genesis_config(&self) -> serde_json::Value {
        let f = &self.forks;
        let bedrock = f.bedrock_block.unwrap_or(0);
        let mut config = serde_json::json!({ "chainId": self.chain_id });
        let object = config.as_object_mut().expect("an object");
        for fork in [
            "homestead",
            "eip150",
            "eip155",
            "eip158",
            "byzantium",
            "constantinople",
            "petersburg",
            "istanbul",
            "muirGlacier",
            "berlin",
        ] {
            object.insert(format!("{fork}Block"), 0.into());
        }
        for fork in ["london", "arrowGlacier", "grayGlacier", "mergeNetsplit", "bedrock"] {
            object.insert(format!("{fork}Block"), bedrock.into());
        }
        object.insert("terminalTotalDifficulty".into(), 0.into());
        object.insert("terminalTotalDifficultyPassed".into(), true.into());
        let ethereum = [("shanghai", f.canyon_time), ("cancun", f.ecotone_time), ("prague", f.isthmus_time)];
        let op = f.times().map(|(name, time, _)| (name, time));
        for (name, time) in ethereum.into_iter().chain(op) {
            if let Some(t) = time {
                object.insert(format!("{name}Time"), t.into());
            }
        }
        let e = &self.eip1559;
        let mut optimism = serde_json::json!({
            "eip1559Elasticity": e.eip1559_elasticity,
            "eip1559Denominator": e.eip1559_denominator,
        });
        if let Some(d) = e.eip1559_denominator_canyon {
            optimism["eip1559DenominatorCanyon"] = d.into();
        }
        object.insert("optimism".into(), optimism);
        config
    }

    /// The chain config a genesis without one is read with: op-node's rollup.json (JSON) or
    /// the registry's TOML, told apart by their first character.
    pub fn from_chain_config_file(text: &str) -> Result<Self, OpConfigError> {
        match text.trim_start().starts_with('{') {
            true => Self::from_rollup_json(&serde_json::from_str(text)?),
            false => Self::from_registry_toml(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = include_str!("../../../test/fixtures/op/chain-configs/base-mainnet.toml");
    const OP: &str = include_str!("../../../test/fixtures/op/chain-configs/op-mainnet.toml");

    #[test]
    fn registry_tomls() {
        let base = OpConfig::from_chain_config_file(BASE).unwrap();
        assert_eq!(base.chain_id, 8453);
        assert_eq!((base.forks.bedrock_block, base.forks.regolith_time), (Some(0), Some(0)));
        assert_eq!(base.forks.canyon_time, Some(1704992401));
        assert_eq!(base.forks.jovian_time, Some(1764691201));
        assert_eq!(
            base.eip1559,
            Eip1559 { eip1559_elasticity: 6, eip1559_denominator: 50, eip1559_denominator_canyon: Some(250) }
        );
        let op = OpConfig::from_registry_toml(OP).unwrap();
        assert_eq!((op.chain_id, op.forks.bedrock_block), (10, Some(105235063)));
        // The genesis config it stands for reads back as the same OP config.
        assert_eq!(OpConfig::from_genesis_config(&op.genesis_config()).unwrap(), Some(op.clone()));
        let config = op.genesis_config();
        assert_eq!(
            (config["londonBlock"].as_u64(), config["cancunTime"].as_u64()),
            (Some(105235063), Some(1710374401))
        );
        assert!(OpConfig::from_registry_toml("chain_id = 1").is_err(), "no [optimism] section");
    }
}

//! Witness fixtures: one real block with everything needed to execute it alone — the
//! rollup config, the parent header, the payload attributes op-node sent, the expected
//! block hash and a witness (every trie node and code the block touches, by keccak). The
//! format is kona's executor test data (`fixture.json` with its key-value store folded in
//! as `preimages`); files may be gzipped.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use alloy_consensus::Header;
use alloy_primitives::{Bytes, B256, B64};
use serde_json::Value;

use crate::block::{execute, Attributes, OpBlockError, OpExecutedBlock};
use crate::config::OpConfig;
use crate::state::WitnessState;

#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("cannot read {0}: {1}")]
    Io(String, std::io::Error),
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("field {0} is missing or malformed")]
    Field(&'static str),
    #[error("rollup config: {0}")]
    Config(#[from] crate::config::OpConfigError),
    #[error("execution: {0}")]
    Block(#[from] OpBlockError),
}

pub struct WitnessFixture {
    pub config: OpConfig,
    pub parent: Header,
    pub attributes: Attributes,
    pub expected_hash: B256,
    pub state: WitnessState,
}

fn field<T: std::str::FromStr>(v: &Value, name: &'static str) -> Result<T, FixtureError> {
    v.get(name).and_then(Value::as_str).and_then(|s| s.parse().ok()).ok_or(FixtureError::Field(name))
}

fn quantity(v: &Value, name: &'static str) -> Result<u64, FixtureError> {
    let s = v.get(name).and_then(Value::as_str).ok_or(FixtureError::Field(name))?;
    u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| FixtureError::Field(name))
}

/// The text of `path`, gunzipped when its name ends in `.gz`.
pub fn read_text(path: &Path) -> Result<String, FixtureError> {
    let io = |e| FixtureError::Io(path.display().to_string(), e);
    let file = std::fs::File::open(path).map_err(io)?;
    let mut text = String::new();
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::GzDecoder::new(file).read_to_string(&mut text).map_err(io)?;
    } else {
        std::io::BufReader::new(file).read_to_string(&mut text).map_err(io)?;
    }
    Ok(text)
}

impl WitnessFixture {
    pub fn load(path: &Path) -> Result<Self, FixtureError> {
        Self::from_json(&serde_json::from_str(&read_text(path)?)?)
    }

    pub fn from_json(fixture: &Value) -> Result<Self, FixtureError> {
        let config = OpConfig::from_rollup_json(&fixture["rollup_config"])?;
        let parent: Header = serde_json::from_value(fixture["parent_header"].clone())?;
        let p = &fixture["executing_payload"];
        let transactions = p
            .get("transactions")
            .and_then(Value::as_array)
            .ok_or(FixtureError::Field("transactions"))?
            .iter()
            .map(|t| t.as_str().and_then(|s| s.parse::<Bytes>().ok()).ok_or(FixtureError::Field("transactions")))
            .collect::<Result<_, _>>()?;
        let attributes = Attributes {
            timestamp: quantity(p, "timestamp")?,
            prev_randao: field(p, "prevRandao")?,
            fee_recipient: field(p, "suggestedFeeRecipient")?,
            parent_beacon_block_root: p
                .get("parentBeaconBlockRoot")
                .and_then(Value::as_str)
                .and_then(|s| s.parse().ok()),
            gas_limit: quantity(p, "gasLimit")?,
            transactions,
            eip1559_params: p.get("eip1559Params").and_then(Value::as_str).and_then(|s| s.parse::<B64>().ok()),
            min_base_fee: p.get("minBaseFee").map(|_| quantity(p, "minBaseFee")).transpose()?,
        };
        let preimages = fixture
            .get("preimages")
            .and_then(Value::as_object)
            .ok_or(FixtureError::Field("preimages"))?
            .iter()
            .map(|(k, v)| {
                let key = k.parse::<B256>().map_err(|_| FixtureError::Field("preimages"))?;
                let value = v.as_str().and_then(|s| s.parse::<Bytes>().ok()).ok_or(FixtureError::Field("preimages"))?;
                Ok((key, value))
            })
            .collect::<Result<HashMap<_, _>, FixtureError>>()?;
        Ok(Self {
            state: WitnessState::new(parent.state_root, preimages),
            expected_hash: field(fixture, "expected_block_hash")?,
            config,
            parent,
            attributes,
        })
    }

    /// Builds the block on the witness.
    pub fn execute(&self) -> Result<OpExecutedBlock, FixtureError> {
        Ok(execute(&self.config, &self.parent, &self.attributes, &self.state)?)
    }
}

/// The `block-*.json` (or `.json.gz`) files of `dir`, in name order.
pub fn block_files(dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.starts_with("block-") && (name.ends_with(".json") || name.ends_with(".json.gz"))
        })
        .collect();
    files.sort();
    Ok(files)
}

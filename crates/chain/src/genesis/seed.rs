//! Opening a chain's genesis: seeding an empty store from the genesis (streamed, whatever
//! its size), or checking that a store holds the chain configured. A store remembers its
//! genesis spec, so restarting needs neither the genesis file nor a pass over its alloc.

use std::fs::File;
use std::path::PathBuf;

use alloy_genesis::Genesis;

use super::stream::{read_genesis, read_genesis_with};
use super::{dev_accounts, dev_genesis, genesis_header, DEV_ACCOUNT_COUNT, DEV_BALANCE};
use crate::error::{Cause, ChainResult, ConfigError, InternalError};
use crate::fork::{ForkPoint, UpstreamState};
use crate::spec::ChainSpec;
use crate::store::genesis::GenesisWriter;
use crate::store::genesis::{AllocAccount, AllocSink};
use crate::store::{Store, META_FORK};
use alloy_primitives::{B256, KECCAK256_EMPTY};

/// Where the genesis comes from.
pub enum GenesisSource {
    /// The embedded dev chain (anvil's accounts).
    Dev,
    /// The embedded dev chain made an OP dev chain (`--optimism`): the OP forks through
    /// Isthmus (or Jovian) from genesis, L1Block and GasPriceOracle in the alloc.
    OpDev(preconf_op::dev::DevChain),
    /// genesis.json contents.
    Json(String),
    /// A genesis.json file, read by streaming.
    File(PathBuf),
    /// A genesis.json file whose `config` is null, and the chain config (op-geth's genesis
    /// `config` shape) read in its place: an OP chain from the superchain registry.
    FileWithConfig(PathBuf, Box<serde_json::Value>),
    /// A forked chain (`--fork-url`): the upstream's fork block is the first block.
    Fork(Box<ForkPoint>),
}

pub struct OpenedGenesis {
    pub spec: ChainSpec,
    pub hash: B256,
    /// The store holds the embedded dev chain (its keys can sign eth_sendTransaction).
    pub is_dev: bool,
}

/// Seeds an empty store from `source`, or checks the stored chain against it.
pub fn open_genesis(source: &GenesisSource, store: &Store) -> ChainResult<OpenedGenesis> {
    let dev_hash = dev_genesis_hash()?;
    match (store.genesis_hash()?, store.genesis_spec()?) {
        (Some(hash), Some(stored)) => {
            let stored: Genesis =
                serde_json::from_str(&stored).map_err(|e| InternalError::CorruptGenesisSpec(Cause::new(e)))?;
            let configured = match source {
                // The node checks the stored fork against the configured one (node.rs).
                GenesisSource::Dev | GenesisSource::Fork(_) => None,
                GenesisSource::OpDev(chain) => Some(Genesis { alloc: Default::default(), ..op_dev_genesis(*chain)? }),
                GenesisSource::Json(json) => Some(read_genesis(json.as_bytes(), None)?),
                GenesisSource::File(path) => Some(read_genesis(open(path)?, None)?),
                GenesisSource::FileWithConfig(path, config) => {
                    Some(read_genesis_with(open(path)?, None, Some(config))?)
                }
            };
            if let Some(configured) = configured {
                // The alloc is not read again (that would cost as much as the state): the
                // chain config and the header fields must match.
                if serde_json::to_value(&configured).ok() != serde_json::to_value(&stored).ok() {
                    return Err(ConfigError::OtherChain(hash).into());
                }
            }
            // The OP dev chain's config (checked above) stands for its alloc too.
            let is_dev = hash == dev_hash || matches!(source, GenesisSource::OpDev(_));
            Ok(OpenedGenesis { spec: ChainSpec::new(stored), hash, is_dev })
        }
        (Some(_), None) | (None, Some(_)) => Err(InternalError::HalfGenesis.into()),
        (None, None) => seed(source, store),
    }
}

/// The source for a genesis file, with the chain config standing in for a null `config`
/// when the operator names one (op-node's rollup.json or the registry's chain TOML).
pub fn file_source(path: PathBuf, chain_config: Option<&std::path::Path>) -> ChainResult<GenesisSource> {
    let Some(config_path) = chain_config else { return Ok(GenesisSource::File(path)) };
    let read_error = |e: Cause| ConfigError::ReadChainConfig { path: config_path.to_path_buf(), source: e };
    let text = std::fs::read_to_string(config_path).map_err(|e| read_error(Cause::new(e)))?;
    let op = preconf_op::OpConfig::from_chain_config_file(&text).map_err(|e| read_error(Cause::new(e)))?;
    Ok(GenesisSource::FileWithConfig(path, Box::new(op.genesis_config())))
}

fn open(path: &PathBuf) -> ChainResult<File> {
    File::open(path).map_err(|e| ConfigError::ReadGenesis { path: path.clone(), source: Cause::new(e) }.into())
}

fn seed(source: &GenesisSource, store: &Store) -> ChainResult<OpenedGenesis> {
    let mut writer = GenesisWriter::new(store)?;
    if let GenesisSource::Fork(point) = source {
        return seed_fork(point, writer.at_block(point.header.number), store);
    }
    let genesis = match source {
        GenesisSource::Dev => {
            let genesis = dev_genesis();
            feed(&genesis, &mut writer)?;
            Genesis { alloc: Default::default(), ..genesis }
        }
        GenesisSource::OpDev(chain) => {
            let genesis = op_dev_genesis(*chain)?;
            feed(&genesis, &mut writer)?;
            Genesis { alloc: Default::default(), ..genesis }
        }
        GenesisSource::Json(json) => read_genesis(json.as_bytes(), Some(&mut writer))?,
        GenesisSource::File(path) => read_genesis(open(path)?, Some(&mut writer))?,
        GenesisSource::FileWithConfig(path, config) => read_genesis_with(open(path)?, Some(&mut writer), Some(config))?,
        GenesisSource::Fork(_) => unreachable!("seeded above"),
    };
    let spec_json = serde_json::to_string(&genesis).map_err(|e| InternalError::GenesisSpec(Cause::new(e)))?;
    let spec = ChainSpec::new(genesis);
    let header = genesis_header(&spec, writer.state_root()?);
    let hash = header.hash_slow();
    let (accounts, slots) = writer.counts();
    writer.finish(&header, hash, &spec_json)?;
    if accounts + slots > 100_000 {
        let fields = serde_json::json!({ "accounts": accounts, "slots": slots, "stateRoot": header.state_root });
        crate::log::info("genesis", "genesis imported", fields);
    }
    Ok(OpenedGenesis { spec, hash, is_dev: matches!(source, GenesisSource::Dev | GenesisSource::OpDev(_)) })
}

/// The OP dev chain's genesis: the embedded dev chain's accounts and chain id under the OP
/// dev rules through `chain`'s last fork (`preconf_op::dev::optimism_genesis_for`).
pub fn op_dev_genesis(chain: preconf_op::dev::DevChain) -> ChainResult<Genesis> {
    let spec_error = |e: Cause| InternalError::GenesisSpec(e);
    let mut json = serde_json::to_value(dev_genesis()).map_err(|e| spec_error(Cause::new(e)))?;
    preconf_op::dev::optimism_genesis_for(&mut json, chain).map_err(|e| spec_error(Cause::new(e)))?;
    Ok(serde_json::from_value(json).map_err(|e| spec_error(Cause::new(e)))?)
}

/// A fork's first block is the upstream's fork block, header verbatim (its hash is the
/// upstream's), over no local state but the dev accounts: every account comes from the
/// upstream until written.
fn seed_fork(point: &ForkPoint, mut writer: GenesisWriter, store: &Store) -> ChainResult<OpenedGenesis> {
    if let Some(upstream) = store.upstream() {
        fund_dev_accounts(upstream.source.as_ref(), &mut writer)?;
    }
    let genesis = fork_genesis(point);
    let spec_json = serde_json::to_string(&genesis).map_err(|e| InternalError::GenesisSpec(Cause::new(e)))?;
    let record = serde_json::to_vec(point).map_err(|e| InternalError::GenesisSpec(Cause::new(e)))?;
    writer.finish_with_meta(&point.header, point.hash, &spec_json, &[(META_FORK, &record)])?;
    Ok(OpenedGenesis { spec: ChainSpec::new(genesis), hash: point.hash, is_dev: false })
}

/// The dev accounts on a fork, as anvil funds them: 10,000 ether each, written locally at
/// the fork block (so the cache of the upstream's state never holds it), with the nonce and
/// code the upstream gives them (a key used upstream keeps its nonce; anvil keeps both).
fn fund_dev_accounts(upstream: &dyn UpstreamState, writer: &mut GenesisWriter) -> ChainResult<()> {
    let addresses: Vec<_> = dev_accounts(DEV_ACCOUNT_COUNT).into_iter().map(|a| a.address).collect();
    upstream.warm(&addresses, &[]);
    for address in addresses {
        let found = upstream.account(&address)?;
        let code = match &found {
            Some(a) if a.code_hash != KECCAK256_EMPTY => upstream.code(&a.code_hash)?,
            _ => None,
        };
        let nonce = found.map_or(0, |a| a.nonce);
        writer.account(address, AllocAccount { nonce, balance: DEV_BALANCE, code })?;
    }
    Ok(())
}

/// What every block of a fork touches, fetched in one batch before the builder starts: the
/// fee recipient and the system contracts (their accounts, and the request queues' slots),
/// with the dev accounts the first block funds.
pub fn warm_fork(upstream: &dyn UpstreamState, point: &ForkPoint) {
    use alloy_eips::{eip2935, eip4788, eip7002, eip7251};
    let queues = [eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS, eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS];
    let mut accounts = vec![point.header.beneficiary, eip4788::BEACON_ROOTS_ADDRESS, eip2935::HISTORY_STORAGE_ADDRESS];
    accounts.extend(queues);
    // The dev accounts' nonce and code, for the seed (from the cache after the first start).
    accounts.extend(dev_accounts(DEV_ACCOUNT_COUNT).into_iter().map(|a| a.address));
    let slots: Vec<_> =
        queues.iter().flat_map(|q| (0..4u64).map(move |s| (*q, alloy_primitives::U256::from(s)))).collect();
    upstream.warm(&accounts, &slots);
}

/// The rules of a fork: the upstream's chain id, and the forks its header shows active
/// (an upstream does not publish its schedule over JSON-RPC; anvil assumes the latest too).
pub fn fork_genesis(point: &ForkPoint) -> Genesis {
    let h = &point.header;
    let mut config = dev_genesis().config;
    config.chain_id = point.chain_id;
    if h.requests_hash.is_none() {
        config.prague_time = None;
    }
    if h.excess_blob_gas.is_none() {
        config.cancun_time = None;
    }
    if h.withdrawals_root.is_none() {
        config.shanghai_time = None;
    }
    Genesis {
        config,
        nonce: u64::from_be_bytes(h.nonce.0),
        timestamp: h.timestamp,
        extra_data: h.extra_data.clone(),
        gas_limit: h.gas_limit,
        difficulty: h.difficulty,
        mix_hash: h.mix_hash,
        coinbase: h.beneficiary,
        base_fee_per_gas: h.base_fee_per_gas.map(u128::from),
        excess_blob_gas: h.excess_blob_gas,
        blob_gas_used: h.blob_gas_used,
        number: Some(h.number),
        parent_hash: Some(h.parent_hash),
        ..Default::default()
    }
}

/// Hands an in-memory alloc to a sink (the embedded dev chain, tests).
fn feed(genesis: &Genesis, sink: &mut dyn AllocSink) -> ChainResult<()> {
    for (address, account) in &genesis.alloc {
        let slots: Vec<_> = account
            .storage
            .iter()
            .flatten()
            .map(|(k, v)| (alloy_primitives::U256::from_be_bytes(k.0), alloy_primitives::U256::from_be_bytes(v.0)))
            .collect();
        if !slots.is_empty() {
            sink.storage(*address, slots)?;
        }
        let code = account.code.clone().filter(|c| !c.is_empty());
        sink.account(*address, AllocAccount { nonce: account.nonce.unwrap_or(0), balance: account.balance, code })?;
    }
    Ok(())
}

/// The embedded dev chain's genesis hash (its alloc is a dozen accounts).
fn dev_genesis_hash() -> ChainResult<B256> {
    static HASH: std::sync::OnceLock<B256> = std::sync::OnceLock::new();
    if let Some(h) = HASH.get() {
        return Ok(*h);
    }
    let store = Store::in_memory()?;
    let hash = seed(&GenesisSource::Dev, &store)?.hash;
    Ok(*HASH.get_or_init(|| hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OP_FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/op");

    #[test]
    fn the_dev_balance_is_ten_thousand_ether() {
        let ether = alloy_primitives::U256::from(10u64).pow(alloy_primitives::U256::from(18u64));
        assert_eq!(DEV_BALANCE, alloy_primitives::U256::from(10_000u64) * ether);
    }

    /// Base's genesis as the superchain registry publishes it (`config: null`), with the
    /// registry's chain TOML standing in for the config: Base's block-0 hash, an OP spec.
    #[test]
    fn base_genesis_with_the_registry_toml() {
        let gz = File::open(format!("{OP_FIXTURES}/base-mainnet-block-1/genesis.json.gz")).unwrap();
        let path = std::env::temp_dir().join(format!("preconf-base-genesis-{}.json", std::process::id()));
        std::io::copy(&mut flate2::read::GzDecoder::new(gz), &mut File::create(&path).unwrap()).unwrap();
        let toml = PathBuf::from(format!("{OP_FIXTURES}/chain-configs/base-mainnet.toml"));

        let source = file_source(path.clone(), Some(&toml)).unwrap();
        let opened = open_genesis(&source, &Store::in_memory().unwrap()).unwrap();
        assert_eq!(
            opened.hash,
            "0xf712aa9241cc24369b143cf6dce85f0902a9731e70d66818a3a5845b296c73dd".parse::<B256>().unwrap()
        );
        let op = opened.spec.op().expect("an OP chain");
        assert_eq!((op.chain_id, op.forks.canyon_time), (8453, Some(1704992401)));
        assert_eq!(opened.spec.chain_id(), 8453);
        // Canyon brings Shanghai, Ecotone Cancun, Isthmus Prague.
        assert_eq!(opened.spec.spec_at(1, 1704992401), revm::primitives::hardfork::SpecId::SHANGHAI);
        assert_eq!(opened.spec.spec_at(1, 1746806401), revm::primitives::hardfork::SpecId::PRAGUE);

        // Without the TOML the genesis names no chain; with it, a genesis that has its own
        // config is refused rather than overridden.
        let e = open_genesis(&GenesisSource::File(path.clone()), &Store::in_memory().unwrap()).err().expect("refused");
        assert_eq!(e.to_string(), ConfigError::NoChainId.to_string());
        let own = std::env::temp_dir().join(format!("preconf-own-config-{}.json", std::process::id()));
        std::fs::write(&own, r#"{"config":{"chainId":7},"alloc":{}}"#).unwrap();
        let e = open_genesis(&file_source(own.clone(), Some(&toml)).unwrap(), &Store::in_memory().unwrap())
            .err()
            .expect("refused");
        assert_eq!(e.to_string(), ConfigError::TwoChainConfigs.to_string());
        let _ = (std::fs::remove_file(&path), std::fs::remove_file(&own));
    }
}

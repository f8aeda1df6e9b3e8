//! Reads a geth-style genesis.json without holding its alloc in memory: accounts and
//! their storage are handed to a sink as they are parsed, storage in chunks, so a genesis
//! of millions of accounts (or a contract with millions of slots) imports in bounded
//! memory. Everything but `alloc` is small and parsed as alloy's `Genesis`.

use std::fmt;
use std::io::Read;

use alloy_genesis::Genesis;
use alloy_primitives::{Address, Bytes, B256, U256};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Deserializer;

use crate::error::{Cause, ChainError, ChainResult, ConfigError};
use crate::store::genesis::{AllocAccount, AllocSink};

/// Slots handed to the sink at once, at most.
pub const STORAGE_CHUNK: usize = 50_000;

/// Parses `reader`; the alloc goes to `sink` (or is skipped when `sink` is `None`), the
/// rest is returned as a `Genesis` with an empty alloc.
pub fn read_genesis(reader: impl Read, sink: Option<&mut dyn AllocSink>) -> ChainResult<Genesis> {
    read_genesis_with(reader, sink, None)
}

/// As [`read_genesis`], with `chain_config` standing in for the genesis's `config` where
/// that is null or absent: the superchain registry publishes OP chains' genesis files so,
/// their config living in the chain's TOML or op-node's rollup.json.
pub fn read_genesis_with(
    reader: impl Read,
    sink: Option<&mut dyn AllocSink>,
    chain_config: Option<&serde_json::Value>,
) -> ChainResult<Genesis> {
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 20, reader));
    let mut error = None;
    let mut rest = de
        .deserialize_map(TopLevel { sink, error: &mut error })
        .map_err(|e| error.take().unwrap_or_else(|| invalid(e)))?;
    de.end().map_err(invalid)?;
    if let Some(config) = chain_config {
        if rest.get("config").is_some_and(|c| !c.is_null()) {
            return Err(ConfigError::TwoChainConfigs.into());
        }
        rest.insert("config".into(), config.clone());
    }
    // alloy defaults a missing chain id to mainnet's; a genesis must name its own.
    if rest.get("config").and_then(|c| c.get("chainId")).is_none() {
        return Err(ConfigError::NoChainId.into());
    }
    let genesis: Genesis = serde_json::from_value(serde_json::Value::Object(rest)).map_err(invalid)?;
    // An OP chain's section must read as one: the chain spec relies on it.
    crate::spec::op_config_of(&genesis).map_err(|e| ConfigError::InvalidGenesis(Cause::new(e)))?;
    Ok(genesis)
}

fn invalid(e: serde_json::Error) -> ChainError {
    ConfigError::InvalidGenesis(Cause::new(e)).into()
}

/// The top-level object: every member but `alloc` collected as JSON.
struct TopLevel<'a, 'e> {
    sink: Option<&'a mut dyn AllocSink>,
    /// A sink failure, reported as itself rather than as a JSON error.
    error: &'e mut Option<ChainError>,
}

impl<'de> Visitor<'de> for TopLevel<'_, '_> {
    type Value = serde_json::Map<String, serde_json::Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a genesis object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut rest = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "alloc" {
                match self.sink.as_deref_mut() {
                    Some(sink) => map.next_value_seed(Alloc { sink, error: self.error })?,
                    None => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                rest.insert(key, serde_json::Value::Object(Default::default()));
            } else {
                rest.insert(key, map.next_value()?);
            }
        }
        Ok(rest)
    }
}

struct Alloc<'a, 'e> {
    sink: &'a mut dyn AllocSink,
    error: &'e mut Option<ChainError>,
}

fn sink_failed<E: serde::de::Error>(slot: &mut Option<ChainError>, e: ChainError) -> E {
    let message = e.to_string();
    *slot = Some(e);
    E::custom(message)
}

impl<'de> DeserializeSeed<'de> for Alloc<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Alloc<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an alloc object keyed by address")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(address) = map.next_key::<Address>()? {
            let account = map.next_value_seed(Account { address, sink: &mut *self.sink, error: &mut *self.error })?;
            self.sink.account(address, account).map_err(|e| sink_failed(self.error, e))?;
        }
        Ok(())
    }
}

struct Account<'a, 'e> {
    address: Address,
    sink: &'a mut dyn AllocSink,
    error: &'e mut Option<ChainError>,
}

impl<'de> DeserializeSeed<'de> for Account<'_, '_> {
    type Value = AllocAccount;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<AllocAccount, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Account<'_, '_> {
    type Value = AllocAccount;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an alloc account")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AllocAccount, A::Error> {
        let mut account = AllocAccount::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "balance" => account.balance = map.next_value::<Quantity>()?.0,
                "nonce" => {
                    account.nonce = u64::try_from(map.next_value::<Quantity>()?.0).map_err(|_| {
                        serde::de::Error::custom(format!("nonce of {} does not fit 64 bits", self.address))
                    })?
                }
                "code" => account.code = map.next_value::<Option<Bytes>>()?.filter(|c| !c.is_empty()),
                "storage" => map.next_value_seed(Storage {
                    address: self.address,
                    sink: &mut *self.sink,
                    error: &mut *self.error,
                })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(account)
    }
}

struct Storage<'a, 'e> {
    address: Address,
    sink: &'a mut dyn AllocSink,
    error: &'e mut Option<ChainError>,
}

impl<'de> DeserializeSeed<'de> for Storage<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for Storage<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a storage object keyed by slot")
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut chunk = Vec::new();
        while let Some(slot) = map.next_key::<B256>()? {
            let value = map.next_value::<B256>()?;
            chunk.push((U256::from_be_bytes(slot.0), U256::from_be_bytes(value.0)));
            if chunk.len() >= STORAGE_CHUNK {
                let full = std::mem::take(&mut chunk);
                self.sink.storage(self.address, full).map_err(|e| sink_failed(self.error, e))?;
            }
        }
        if !chunk.is_empty() {
            self.sink.storage(self.address, chunk).map_err(|e| sink_failed(self.error, e))?;
        }
        Ok(())
    }
}

/// A balance or nonce as geth writes them: a 0x quantity or a decimal string or number.
struct Quantity(U256);

impl<'de> serde::Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => {
                let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                    Some(hex) => U256::from_str_radix(hex, 16),
                    None => U256::from_str_radix(&s, 10),
                };
                parsed.map(Quantity).map_err(|_| serde::de::Error::custom(format!("invalid quantity {s:?}")))
            }
            serde_json::Value::Number(n) => n
                .as_u64()
                .map(|v| Quantity(U256::from(v)))
                .ok_or_else(|| serde::de::Error::custom(format!("invalid quantity {n}"))),
            other => Err(serde::de::Error::custom(format!("invalid quantity {other}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect {
        accounts: Vec<(Address, AllocAccount)>,
        slots: Vec<(Address, usize)>,
    }

    impl AllocSink for Collect {
        fn storage(&mut self, address: Address, slots: Vec<(U256, U256)>) -> ChainResult<()> {
            self.slots.push((address, slots.len()));
            Ok(())
        }
        fn account(&mut self, address: Address, account: AllocAccount) -> ChainResult<()> {
            self.accounts.push((address, account));
            Ok(())
        }
    }

    #[test]
    fn streams_the_alloc_and_parses_the_rest_as_alloy_does() {
        let text = include_str!("../../tests/fixtures/hive-genesis.json");
        let mut sink = Collect::default();
        let streamed = read_genesis(text.as_bytes(), Some(&mut sink)).unwrap();
        let whole: Genesis = serde_json::from_str(text).unwrap();
        assert_eq!(streamed.config, whole.config);
        assert_eq!(streamed.extra_data, whole.extra_data);
        assert_eq!(sink.accounts.len(), whole.alloc.len());
        for (address, account) in &sink.accounts {
            let want = &whole.alloc[address];
            assert_eq!(account.balance, want.balance, "{address}");
            assert_eq!(account.nonce, want.nonce.unwrap_or(0), "{address}");
            assert_eq!(account.code, want.code.clone().filter(|c| !c.is_empty()), "{address}");
            let slots: usize = sink.slots.iter().filter(|(a, _)| a == address).map(|(_, n)| n).sum();
            assert_eq!(slots, want.storage.as_ref().map_or(0, |s| s.len()), "{address}");
        }
        let skipped = read_genesis(text.as_bytes(), None).unwrap();
        assert_eq!(skipped.config, whole.config);
    }

    #[test]
    fn large_storage_arrives_in_chunks() {
        let mut text = String::from(
            r#"{"config":{"chainId":7},"alloc":{"0x00000000000000000000000000000000000000aa":{"storage":{"#,
        );
        let n = STORAGE_CHUNK * 2 + 5;
        for i in 0..n {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!("\"{:#066x}\":\"{:#066x}\"", i + 1, i + 1));
        }
        text.push_str(r#"},"balance":"0x10"}}}"#);
        let mut sink = Collect::default();
        read_genesis(text.as_bytes(), Some(&mut sink)).unwrap();
        assert_eq!(sink.slots.iter().map(|(_, n)| *n).collect::<Vec<_>>(), vec![STORAGE_CHUNK, STORAGE_CHUNK, 5]);
        assert_eq!(sink.accounts[0].1.balance, U256::from(16));
    }

    #[test]
    fn bad_input_is_a_config_error_naming_the_problem() {
        let mut sink = Collect::default();
        let e =
            read_genesis(r#"{"config":{"chainId":7},"alloc":{"0x12":{}}}"#.as_bytes(), Some(&mut sink)).unwrap_err();
        assert!(matches!(e, ChainError::Config(ConfigError::InvalidGenesis(_))), "{e:?}");
        assert!(e.to_string().contains("invalid genesis file"), "{e}");
        let e = read_genesis(r#"{"config":{},"alloc":{}}"#.as_bytes(), None).unwrap_err();
        assert!(matches!(e, ChainError::Config(ConfigError::NoChainId)), "{e:?}");
        assert_eq!(e.to_string(), "genesis config has no chainId");
    }
}

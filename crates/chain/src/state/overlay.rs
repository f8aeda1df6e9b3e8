//! The pending block's state changes as layers over the stored state.

use std::sync::Arc;

use alloy_primitives::{Address, Bytes, B256, U256};

use crate::changes::{AccountState, StateChanges};

/// Pre-confirmed changes on top of a stored block, oldest first. Each pre-confirmation
/// adds one layer (what its transactions changed) instead of copying every change the
/// block made so far; a read asks the layers newest first. So that a block of many short
/// pre-confirmations does not make reads ask hundreds of layers, equal neighbours merge
/// (1+1 -> 2, 2+2 -> 4, ...) up to `MERGE_UP_TO` pre-confirmations a layer: a tick copies
/// at most that many ticks' changes, and a read asks about block/`MERGE_UP_TO` + log2 of it.
/// Most reads are of accounts the block never touched: `touched` answers those without
/// asking any layer. One allocation holds it all, so a reader's copy (every call clones its
/// state view) costs one count whatever the number of layers.
#[derive(Clone, Debug, Default)]
pub struct Overlay(Arc<Layers>);

#[derive(Debug, Default)]
struct Layers {
    layers: Vec<Arc<StateChanges>>,
    /// How many pre-confirmations each layer holds.
    spans: Vec<u32>,
    touched: Touched,
}

/// The most pre-confirmations one merged layer holds (the bound on a tick's merging work).
pub const MERGE_UP_TO: u32 = 16;

impl Overlay {
    /// This overlay with one more (newer) layer.
    pub fn with(&self, layer: Arc<StateChanges>) -> Self {
        let mut touched = self.0.touched.clone();
        touched.add(&layer);
        let mut layers = Vec::with_capacity(self.0.layers.len() + 1);
        layers.extend(self.0.layers.iter().cloned());
        let mut spans = self.0.spans.clone();
        layers.push(layer);
        spans.push(1);
        while let [.., a, b] = spans[..] {
            if a != b || a + b > MERGE_UP_TO {
                break;
            }
            let newer = layers.pop().expect("one per span");
            let older = layers.pop().expect("one per span");
            let mut merged = (*older).clone();
            merged.extend((*newer).clone());
            layers.push(Arc::new(merged));
            spans.pop();
            *spans.last_mut().expect("one per span") = a + b;
        }
        Self(Arc::new(Layers { layers, spans, touched }))
    }

    pub fn layers(&self) -> &[Arc<StateChanges>] {
        &self.0.layers
    }

    #[cfg(test)]
    pub(super) fn spans(&self) -> &[u32] {
        &self.0.spans
    }

    pub(super) fn account(&self, address: &Address) -> Option<Option<AccountState>> {
        if !self.0.touched.may_hold(address.as_slice()) {
            return None;
        }
        self.layers().iter().rev().find_map(|l| l.account(address))
    }

    pub(super) fn storage(&self, address: &Address, slot: &U256) -> Option<U256> {
        // A layer answers for a slot only when it changed the account.
        if !self.0.touched.may_hold(address.as_slice()) {
            return None;
        }
        self.layers().iter().rev().find_map(|l| l.storage(address, slot))
    }

    pub(super) fn code(&self, hash: &B256) -> Option<Bytes> {
        if !self.0.touched.may_hold(hash.as_slice()) {
            return None;
        }
        self.layers().iter().rev().find_map(|l| l.codes.get(hash).cloned())
    }
}

/// A Bloom filter of the accounts and code hashes the layers hold: `false` is certain,
/// `true` means ask the layers. 64 Kbit with three probes: under 1 % false answers at the
/// ~2,000 accounts of a block of 1,000 transfers.
#[derive(Clone)]
struct Touched(Box<[u64; TOUCHED_WORDS]>);

const TOUCHED_WORDS: usize = 1024;

impl Default for Touched {
    fn default() -> Self {
        Self(Box::new([0; TOUCHED_WORDS]))
    }
}

impl std::fmt::Debug for Touched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Touched")
    }
}

impl Touched {
    fn add(&mut self, layer: &StateChanges) {
        for address in layer.accounts.keys() {
            self.insert(address.as_slice());
        }
        for hash in layer.codes.keys() {
            self.insert(hash.as_slice());
        }
    }

    /// Bit positions of a key. Addresses and code hashes come out of keccak, so their own
    /// bytes are spread enough; a chosen address can only make its own reads ask the layers.
    fn probes(key: &[u8]) -> [usize; 3] {
        let word = |i: usize| u64::from_le_bytes(key[i..i + 8].try_into().expect("8 bytes"));
        let h = word(0) ^ word(8).rotate_left(21) ^ word(key.len() - 8).rotate_left(42);
        let bits = (TOUCHED_WORDS * 64) as u64;
        [h % bits, (h >> 21) % bits, (h >> 42) % bits].map(|b| b as usize)
    }

    fn insert(&mut self, key: &[u8]) {
        for bit in Self::probes(key) {
            self.0[bit / 64] |= 1 << (bit % 64);
        }
    }

    fn may_hold(&self, key: &[u8]) -> bool {
        Self::probes(key).iter().all(|bit| self.0[bit / 64] & (1 << (bit % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::AccountChange;

    #[test]
    fn every_key_a_layer_holds_is_asked_for_and_most_others_are_not() {
        let mut overlay = Overlay::default();
        let mut held = Vec::new();
        for tick in 0..100u64 {
            let mut layer = StateChanges::default();
            for i in 0..20u64 {
                let address = Address::from_word(alloy_primitives::keccak256((tick * 100 + i).to_be_bytes()));
                layer.accounts.insert(address, AccountChange { info: None, ..Default::default() });
                held.push(address);
            }
            layer.codes.insert(alloy_primitives::keccak256(tick.to_le_bytes()), Bytes::from_static(b"\x00"));
            overlay = overlay.with(Arc::new(layer));
        }
        for address in &held {
            assert_eq!(overlay.account(address), Some(None), "a held account must be found");
        }
        for tick in 0..100u64 {
            assert!(overlay.code(&alloy_primitives::keccak256(tick.to_le_bytes())).is_some());
        }
        let asked = (0..10_000u64)
            .map(|i| Address::from_word(alloy_primitives::keccak256((1_000_000 + i).to_be_bytes())))
            .filter(|a| overlay.0.touched.may_hold(a.as_slice()))
            .count();
        assert!(asked < 100, "{asked} of 10,000 untouched accounts would ask the layers");
    }
}

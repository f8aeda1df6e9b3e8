//! The precompile set of one simulated block: the fork's precompiles, with
//! `movePrecompileToAddress` applied. revm's precompiles cannot be re-addressed, so the
//! provider wraps the fork's set and redirects calls.

use std::collections::HashMap;

use alloy_primitives::Address;
use revm::context::Cfg;
use revm::context_interface::ContextTr;
use revm::handler::{precompile_output_to_interpreter_result, EthPrecompiles, PrecompileProvider};
use revm::interpreter::{CallInputs, InterpreterResult};
use revm::primitives::{hardfork::SpecId, AddressSet};

use crate::error::{ChainResult, SimulateError};
use alloy_rpc_types_eth::state::StateOverride;

#[derive(Clone, Debug)]
pub struct SimPrecompiles {
    inner: EthPrecompiles,
    /// New address -> the precompile moved there.
    moved: HashMap<Address, Address>,
    /// Fork precompiles that no longer run at their own address (moved away or overridden).
    removed: AddressSet,
    /// Addresses that run a precompile now (warm from the start of every transaction).
    active: AddressSet,
    /// The journal must re-read `active` before the next transaction.
    dirty: bool,
}

impl SimPrecompiles {
    pub fn new(spec: SpecId) -> Self {
        let mut set = Self {
            inner: EthPrecompiles::new(spec),
            moved: HashMap::new(),
            removed: AddressSet::default(),
            active: AddressSet::default(),
            dirty: true,
        };
        set.rebuild();
        set
    }

    fn rebuild(&mut self) {
        let mut active: AddressSet = self.inner.warm_addresses().collect();
        for a in &self.removed {
            active.remove(a);
        }
        active.extend(self.moved.keys().copied());
        self.active = active;
        self.dirty = true;
    }

    /// Applies a block's state overrides to the set, with geth's rules: only a precompile
    /// can move, not onto itself, not onto an address that is overridden itself; and any
    /// overridden precompile address stops being one (its override, e.g. `code`, takes
    /// over). Two precompiles moved to one address are refused (-38023), unless
    /// `later_wins` (geth, which lets the later one in its map order take the address).
    pub fn apply_overrides(&mut self, overrides: &StateOverride, later_wins: bool) -> ChainResult<()> {
        for (address, o) in overrides {
            let Some(to) = o.move_precompile_to else { continue };
            if !self.inner.contains(address) {
                return Err(SimulateError::NotAPrecompile(*address).into());
            }
            if to == *address {
                return Err(SimulateError::MoveOntoItself(*address).into());
            }
            if let Some(other) = self.moved.get(&to).filter(|_| !later_wins) {
                return Err(SimulateError::MovedTogether { first: *other, second: *address, to }.into());
            }
            if overrides.contains_key(&to) {
                return Err(SimulateError::AlreadyOverridden(to).into());
            }
            self.moved.insert(to, *address);
        }
        for address in overrides.keys() {
            if self.inner.contains(address) {
                self.removed.insert(*address);
            }
        }
        self.rebuild();
        Ok(())
    }
}

impl<CTX: ContextTr> PrecompileProvider<CTX> for SimPrecompiles {
    type Output = InterpreterResult;

    fn set_spec(&mut self, spec: <CTX::Cfg as Cfg>::Spec) -> bool {
        if <EthPrecompiles as PrecompileProvider<CTX>>::set_spec(&mut self.inner, spec) {
            self.rebuild();
        }
        // `true` makes the journal warm `active` again.
        std::mem::take(&mut self.dirty)
    }

    fn run(&mut self, context: &mut CTX, inputs: &CallInputs) -> Result<Option<InterpreterResult>, String> {
        let address = inputs.bytecode_address;
        if let Some(original) = self.moved.get(&address) {
            let Some(precompile) = self.inner.precompiles.get(original) else { return Ok(None) };
            let output = precompile
                .execute(&inputs.input.as_bytes(context), inputs.gas_limit, inputs.reservoir)
                .map_err(|e| e.to_string())?;
            return Ok(Some(precompile_output_to_interpreter_result(output, inputs.gas_limit)));
        }
        if self.removed.contains(&address) {
            // Runs the account's code (an override's, or none).
            return Ok(None);
        }
        <EthPrecompiles as PrecompileProvider<CTX>>::run(&mut self.inner, context, inputs)
    }

    /// The fork's precompile addresses, wherever they were moved: geth warms that fixed
    /// list at the start of a transaction, not its simulation's precompile map.
    fn warm_addresses(&self) -> Box<impl Iterator<Item = Address>> {
        self.inner.warm_addresses()
    }

    fn contains(&self, address: &Address) -> bool {
        self.active.contains(address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ChainError, SimulateCode};
    use alloy_primitives::address;
    use alloy_rpc_types_eth::state::AccountOverride;

    const ECRECOVER: Address = address!("0x0000000000000000000000000000000000000001");
    const SHA256: Address = address!("0x0000000000000000000000000000000000000002");
    const NEW: Address = address!("0x0000000000000000000000000000000000123456");

    fn moves(list: &[(Address, Address)]) -> StateOverride {
        list.iter()
            .map(|(from, to)| (*from, AccountOverride { move_precompile_to: Some(*to), ..Default::default() }))
            .collect()
    }

    #[test]
    fn a_moved_precompile_runs_at_its_new_address_only() {
        let mut p = SimPrecompiles::new(SpecId::PRAGUE);
        p.apply_overrides(&moves(&[(ECRECOVER, NEW)]), false).unwrap();
        assert!(p.active.contains(&NEW));
        assert!(!p.active.contains(&ECRECOVER));
        assert!(p.active.contains(&SHA256));
    }

    #[test]
    fn moves_are_checked() {
        let kind = |list: &[(Address, Address)]| match SimPrecompiles::new(SpecId::PRAGUE)
            .apply_overrides(&moves(list), false)
        {
            Err(ChainError::Simulate(e)) => e.code(),
            other => panic!("expected a simulate error, got {other:?}"),
        };
        assert_eq!(kind(&[(NEW, ECRECOVER)]), SimulateCode::Generic); // not a precompile
        assert_eq!(kind(&[(ECRECOVER, ECRECOVER)]), SimulateCode::PrecompileSelfReference);
        assert_eq!(kind(&[(ECRECOVER, NEW), (SHA256, NEW)]), SimulateCode::PrecompileDuplicateAddress);
        assert_eq!(kind(&[(ECRECOVER, SHA256), (SHA256, NEW)]), SimulateCode::Generic);
        // destination overridden
    }

    #[test]
    fn an_overridden_precompile_stops_being_one() {
        let mut p = SimPrecompiles::new(SpecId::PRAGUE);
        let o: StateOverride =
            [(SHA256, AccountOverride { code: Some(vec![0x00].into()), ..Default::default() })].into_iter().collect();
        p.apply_overrides(&o, false).unwrap();
        assert!(!p.active.contains(&SHA256));
    }
}

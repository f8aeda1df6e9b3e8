//! What each transaction of a sealed block returned (anvil_mine_detailed's `output`): the
//! block replayed untraced on its parent's state. Receipts keep no return data, and the
//! builder keeps none, so the cost falls on the one method that asks.

use alloy_primitives::{hex, Address, Bytes, KECCAK256_EMPTY};
use alloy_sol_types::{Panic, Revert, SolError, SolValue};
use revm::database::CacheDB;
use revm::Database;

use super::block_evm::{BlockEvm, TxRefusal};
use super::system::{self, SystemCalls};
use super::trace::session::BlockToTrace;
use super::ExecBlock;
use crate::error::{Cause, ChainError, ChainResult, InternalError};
use crate::spec::ChainSpec;
use crate::state::StateView;

/// How one transaction ended, with what it returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxOutput {
    /// A call's return data, or a creation's deployed code.
    Returned(Bytes),
    /// The revert data.
    Reverted(Bytes),
    /// Halted (out of gas, invalid opcode, ...): nothing returned.
    Halted,
}

struct Replay {
    /// Ethereum's EVM, or op-revm's on an OP chain (deposits, the L1 fee as in the block).
    evm: BlockEvm<StateView>,
}

impl SystemCalls for Replay {
    fn system_call(&mut self, address: Address, input: Bytes) -> ChainResult<Option<Bytes>> {
        let db = self.evm.db();
        if db.basic(address)?.is_none_or(|a| a.code_hash == KECCAK256_EMPTY) {
            return Ok(None);
        }
        let out =
            self.evm.system_call(address, input).map_err(|source| InternalError::SystemCall { address, source })?;
        let output = out.output.clone();
        self.evm.commit(out.state);
        Ok(output)
    }
}

/// The outputs of `block`'s transactions, in order. A replay that does not use the gas the
/// block recorded is the node's fault.
pub fn tx_outputs(spec: &ChainSpec, block: &BlockToTrace) -> ChainResult<Vec<TxOutput>> {
    let header = &block.header;
    let evm = BlockEvm::new(CacheDB::new(block.parent_state.clone()), spec, &ExecBlock::from_header(header));
    let mut replay = Replay { evm };
    system::pre_block(&mut replay, header, spec.spec_at(header.number, header.timestamp))?;
    let mut outputs = Vec::with_capacity(block.txs.len());
    for etx in &block.txs {
        let raw = Bytes::from(etx.tx.encoded_2718());
        let out = replay.evm.transact(&etx.tx, etx.sender, &raw).map_err(|e| {
            let source = match e {
                TxRefusal::Invalid(e) => Cause::new(e),
                TxRefusal::Failed(cause) => cause,
            };
            ChainError::from(InternalError::Replay { hash: etx.hash(), source })
        })?;
        if out.gas_used != etx.gas_used {
            return Err(
                InternalError::ReplayGas { hash: etx.hash(), gas_used: out.gas_used, recorded: etx.gas_used }.into()
            );
        }
        outputs.push(match (out.success, out.output.clone()) {
            (true, output) => TxOutput::Returned(output.unwrap_or_default()),
            (false, Some(output)) => TxOutput::Reverted(output),
            (false, None) => TxOutput::Halted,
        });
        replay.evm.commit(out.state);
    }
    Ok(outputs)
}

/// The reason anvil gives a reverted transaction (`revertReason`): Error(string)'s text,
/// Panic(uint256)'s description, else a string the data holds, else the custom error's
/// selector and data; `None` for no data.
pub fn revert_reason(data: &[u8]) -> Option<String> {
    if let Ok(revert) = Revert::abi_decode(data) {
        return Some(revert.reason);
    }
    if let Ok(panic) = Panic::abi_decode(data) {
        return Some(panic.to_string());
    }
    let text = String::abi_decode(data)
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| (data.is_ascii() && !data.is_empty()).then(|| String::from_utf8_lossy(data).into_owned()));
    if text.is_some() {
        return text;
    }
    match data.split_first_chunk::<4>() {
        Some((selector, rest)) => {
            let mut s = format!("custom error {}", hex::encode_prefixed(selector));
            if !rest.is_empty() {
                s.push_str(": ");
                match std::str::from_utf8(rest) {
                    Ok(t) => s.push_str(t),
                    Err(_) => s.push_str(&hex::encode(rest)),
                }
            }
            Some(s)
        }
        None => (!data.is_empty()).then(|| format!("custom error bytes {}", hex::encode_prefixed(data))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::U256;
    use alloy_sol_types::SolError;

    #[test]
    fn revert_reasons_read_as_anvil_reads_them() {
        let error = Revert { reason: "allowance exceeded".into() }.abi_encode();
        assert_eq!(revert_reason(&error).as_deref(), Some("allowance exceeded"));
        let panic = Panic { code: U256::from(0x11) }.abi_encode();
        assert_eq!(revert_reason(&panic).as_deref(), Some("panic: arithmetic underflow or overflow (0x11)"));
        assert_eq!(revert_reason(&[0xde, 0xad, 0xbe, 0xef, 0xff]).as_deref(), Some("custom error 0xdeadbeef: ff"));
        assert_eq!(revert_reason(&[0xff]).as_deref(), Some("custom error bytes 0xff"));
        assert_eq!(revert_reason(&[]), None);
    }
}

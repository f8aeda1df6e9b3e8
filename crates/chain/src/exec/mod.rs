//! EVM execution with revm: the one place where an EVM is configured. The builder,
//! eth_call, eth_estimateGas and eth_simulateV1 all build their EVM here, so their rules
//! cannot drift apart.

pub mod access_list;
pub mod answer_slot;
pub mod block_evm;
pub mod call;
pub mod create_guard;
pub mod errors;
pub mod estimate;
pub mod outputs;
pub mod overrides;
pub mod prepare;
pub mod request;
pub mod simulate;
pub mod system;
pub mod trace;

use alloy_consensus::{Header, Transaction as _, TxEnvelope};
use alloy_eips::{eip7840::BlobParams, Typed2718};
use alloy_primitives::{Address, B256, U256};
use revm::context::{BlockEnv, CfgEnv, Context, TxEnv};
use revm::context_interface::block::BlobExcessGasAndPrice;
use revm::database::CacheDB;
use revm::handler::{MainBuilder, MainnetEvm};
use revm::primitives::hardfork::SpecId;
use revm::primitives::TxKind;

use crate::spec::ChainSpec;
use create_guard::{GuardedJournal, StorageSlots};

/// The revm context over an overlay database `CacheDB<DB>`, with revm's journal guarded
/// for EIP-7610 (creation collides with storage too: `create_guard`).
pub type EvmContext<DB> = Context<BlockEnv, TxEnv, CfgEnv, CacheDB<DB>, GuardedJournal<DB>, ()>;
pub type Evm<DB> = MainnetEvm<EvmContext<DB>>;

/// The block a transaction or call executes in.
#[derive(Clone, Debug)]
pub struct ExecBlock {
    pub number: u64,
    pub timestamp: u64,
    pub beneficiary: Address,
    pub gas_limit: u64,
    pub base_fee: u64,
    pub prevrandao: B256,
    pub difficulty: U256,
    pub excess_blob_gas: Option<u64>,
}

impl ExecBlock {
    pub fn from_header(header: &Header) -> Self {
        Self {
            number: header.number,
            timestamp: header.timestamp,
            beneficiary: header.beneficiary,
            gas_limit: header.gas_limit,
            base_fee: header.base_fee_per_gas.unwrap_or_default(),
            prevrandao: header.mix_hash,
            difficulty: header.difficulty,
            excess_blob_gas: header.excess_blob_gas,
        }
    }

    pub fn env(&self, spec: &ChainSpec, spec_id: SpecId) -> BlockEnv {
        let merged = spec_id.is_enabled_in(SpecId::MERGE);
        BlockEnv {
            number: U256::from(self.number),
            beneficiary: self.beneficiary,
            timestamp: U256::from(self.timestamp),
            gas_limit: self.gas_limit,
            basefee: self.base_fee,
            difficulty: if merged { U256::ZERO } else { self.difficulty },
            prevrandao: if merged { Some(self.prevrandao) } else { None },
            blob_excess_gas_and_price: self
                .excess_blob_gas
                .map(|excess| BlobExcessGasAndPrice::new(excess, blob_update_fraction(spec, self.timestamp, spec_id))),
            slot_num: 0,
        }
    }
}

/// The blob base-fee update fraction in force at `timestamp`: the genesis `blobSchedule`
/// entry of the fork, blob-parameter-only forks (BPO1…) included; revm's defaults when the
/// schedule names none.
fn blob_update_fraction(spec: &ChainSpec, timestamp: u64, spec_id: SpecId) -> u64 {
    match spec.blob_params_at(timestamp) {
        Some(params) => params.update_fraction as u64,
        None if spec_id.is_enabled_in(SpecId::PRAGUE) => BlobParams::prague().update_fraction as u64,
        None => BlobParams::cancun().update_fraction as u64,
    }
}

/// How strictly a transaction is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A real transaction: every consensus check.
    Transaction,
    /// eth_call / eth_estimateGas / unvalidated simulation: no nonce or base-fee checks,
    /// calls from contracts allowed, gas beyond the block limit allowed (geth's rules).
    Call,
}

pub fn cfg_env(spec: &ChainSpec, spec_id: SpecId, mode: Mode) -> CfgEnv {
    let mut cfg = CfgEnv::new_with_spec(spec_id);
    cfg.chain_id = spec.chain_id();
    if mode == Mode::Call {
        cfg.disable_nonce_check = true;
        cfg.disable_base_fee = true;
        cfg.disable_eip3607 = true;
        cfg.disable_block_gas_limit = true;
        cfg.tx_gas_limit_cap = Some(u64::MAX);
    }
    cfg
}

/// The revm context (rules, block, database) for one block. Every EVM is built from it,
/// whatever inspector or precompile set it then gets (eth_simulateV1 adds both).
pub fn evm_context<DB: StorageSlots>(
    db: CacheDB<DB>,
    spec: &ChainSpec,
    block: &ExecBlock,
    mode: Mode,
) -> EvmContext<DB> {
    let spec_id = spec.spec_at(block.number, block.timestamp);
    evm_context_with_spec(db, spec, block, mode, spec_id)
}

/// Like [`evm_context`] with the rules given: an imported block runs under the rules its
/// header says (`ChainSpec::spec_for_header`: a chain merged by total difficulty has no
/// block number for the Merge). The blob limits follow the block's timestamp (EIP-7840
/// schedule, BPO forks, Osaka's per-transaction cap of EIP-7594).
pub fn evm_context_with_spec<DB: StorageSlots>(
    db: CacheDB<DB>,
    spec: &ChainSpec,
    block: &ExecBlock,
    mode: Mode,
    spec_id: SpecId,
) -> EvmContext<DB> {
    let mut cfg = cfg_env(spec, spec_id, mode);
    if let Some(params) = spec.blob_params_at(block.timestamp) {
        cfg.max_blobs_per_tx = Some(params.max_blobs_per_tx);
        cfg.blob_base_fee_update_fraction = Some(params.update_fraction as u64);
    }
    EvmContext::<DB>::new(db, spec_id).with_cfg(cfg).with_block(block.env(spec, spec_id))
}

/// An EVM over `CacheDB<DB>` for one block.
pub fn build_evm<DB: StorageSlots>(db: CacheDB<DB>, spec: &ChainSpec, block: &ExecBlock, mode: Mode) -> Evm<DB> {
    evm_context(db, spec, block, mode).build_mainnet()
}

/// revm's transaction for one of a block's transactions replayed on the Ethereum EVM
/// (tracing, anvil's outputs). A deposit, which only an OP chain's blocks hold, runs on
/// op-revm alone, which replays do not drive yet: it is refused as an unsupported type.
pub fn tx_env_from_executed(etx: &crate::types::ExecutedTx) -> crate::error::ChainResult<TxEnv> {
    match &etx.tx {
        preconf_op::OpTx::Eth(tx) => Ok(tx_env_from_signed(tx, etx.sender)),
        preconf_op::OpTx::Deposit(_) => {
            Err(crate::error::Rejection::TypeNotSupported(preconf_op::deposit::DEPOSIT_TX_TYPE).into())
        }
    }
}

/// The revm transaction for a signed transaction from `sender`.
pub fn tx_env_from_signed(tx: &TxEnvelope, sender: Address) -> TxEnv {
    let mut env = TxEnv {
        tx_type: tx.ty(),
        caller: sender,
        gas_limit: tx.gas_limit(),
        gas_price: if tx.is_dynamic_fee() { tx.max_fee_per_gas() } else { tx.gas_price().unwrap_or_default() },
        kind: match tx.to() {
            Some(to) => TxKind::Call(to),
            None => TxKind::Create,
        },
        value: tx.value(),
        data: tx.input().clone(),
        nonce: tx.nonce(),
        chain_id: tx.chain_id(),
        access_list: tx.access_list().cloned().unwrap_or_default(),
        gas_priority_fee: if tx.is_dynamic_fee() { tx.max_priority_fee_per_gas() } else { None },
        blob_hashes: tx.blob_versioned_hashes().map(|h| h.to_vec()).unwrap_or_default(),
        max_fee_per_blob_gas: tx.max_fee_per_blob_gas().unwrap_or_default(),
        ..Default::default()
    };
    if let Some(auths) = tx.authorization_list() {
        env.set_signed_authorization(auths.to_vec());
    }
    env
}

//! Executing one OP block with op-revm: from its parent header and the payload attributes
//! op-node derives (timestamp, prevRandao, fee recipient, beacon root, gas limit, the raw
//! transactions with the L1-info deposit first, Holocene's EIP-1559 parameters), on a state
//! that serves both revm's reads and the trie's node reads. The result is the whole header.

use std::collections::BTreeMap;

use alloy_consensus::{Header, ReceiptEnvelope, ReceiptWithBloom, TxType, EMPTY_ROOT_HASH};
use alloy_eips::eip2718::Encodable2718;
use alloy_eips::{eip2935, eip4788, Typed2718};
use alloy_primitives::{keccak256, Address, Bloom, Bytes, Log, B256, U256};
use alloy_rlp::{BufMut, Encodable};
use op_revm::api::builder::DefaultOpEvm;
use op_revm::{DefaultOp, L1BlockInfo, OpBuilder, OpContext, OpSpecId};
use preconf_trie::{account_proof, state_root, AccountFields, AccountUpdate, NodeReader, Overlay, TrieDiff, TrieError};
use revm::context::result::ExecutionResult;
use revm::context::{BlockEnv, CfgEnv, Context};
use revm::database::{AccountState, CacheDB};
use revm::database_interface::{DBErrorMarker, DatabaseRef};
use revm::handler::{ExecuteCommitEvm, ExecuteEvm, SystemCallEvm};
use revm::primitives::KECCAK_EMPTY;

use crate::canyon;
use crate::config::OpConfig;
use crate::deposit::DEPOSIT_TX_TYPE;
use crate::tx::OpTx;

/// The L2ToL1MessagePasser predeploy: from Isthmus its storage root is the header's
/// `withdrawalsRoot`.
pub const L2_TO_L1_MESSAGE_PASSER: Address = alloy_primitives::address!("4200000000000000000000000000000000000016");

pub use crate::attributes::Attributes;

#[derive(Debug, thiserror::Error)]
pub enum OpBlockError {
    #[error("transaction {index}: {reason}")]
    Transaction { index: usize, reason: String },
    #[error("system call: {0}")]
    SystemCall(String),
    #[error("state: {0}")]
    State(String),
    #[error("trie: {0}")]
    Trie(#[from] TrieError),
}

/// A transaction of the block with its outcome.
#[derive(Clone, Debug)]
pub struct OpExecutedTx {
    pub tx: OpTx,
    pub sender: Address,
    pub success: bool,
    pub gas_used: u64,
    pub cumulative_gas_used: u64,
    pub logs: Vec<Log>,
    /// A deposit's sender nonce before it ran (receipts carry it from Regolith).
    pub deposit_nonce: Option<u64>,
}

pub struct OpExecutedBlock {
    pub header: Header,
    pub txs: Vec<OpExecutedTx>,
}

/// The receipt as the receipts trie holds it. A deposit's receipt gains `depositNonce` and
/// `depositReceiptVersion` (1) from Canyon on; before, it is an Ethereum receipt typed 0x7E.
pub fn encode_receipt(etx: &OpExecutedTx, canyon: bool) -> Vec<u8> {
    let bloom = alloy_primitives::logs_bloom(etx.logs.iter());
    if !etx.tx.is_deposit() {
        let OpTx::Eth(tx) = &etx.tx else { unreachable!() };
        let receipt = alloy_consensus::Receipt {
            status: etx.success.into(),
            cumulative_gas_used: etx.cumulative_gas_used,
            logs: etx.logs.clone(),
        };
        let ty = TxType::try_from(tx.ty()).unwrap_or(TxType::Legacy);
        return ReceiptEnvelope::from_typed(ty, ReceiptWithBloom::new(receipt, bloom)).encoded_2718();
    }
    let nonce_fields = match (canyon, etx.deposit_nonce) {
        (true, Some(nonce)) => Some((nonce, 1u8)),
        _ => None,
    };
    let payload = etx.success.length()
        + etx.cumulative_gas_used.length()
        + bloom.length()
        + etx.logs.length()
        + nonce_fields.map_or(0, |(n, v)| n.length() + v.length());
    let mut out = vec![DEPOSIT_TX_TYPE];
    alloy_rlp::Header { list: true, payload_length: payload }.encode(&mut out);
    etx.success.encode(&mut out);
    etx.cumulative_gas_used.encode(&mut out);
    bloom.encode(&mut out);
    etx.logs.encode(&mut out);
    if let Some((nonce, version)) = nonce_fields {
        nonce.encode(&mut out);
        out.put_u8(version);
    }
    out
}

/// Executes the block `attributes` describe on `parent`'s state `state`.
pub fn execute<S>(
    config: &OpConfig,
    parent: &Header,
    attributes: &Attributes,
    state: &S,
) -> Result<OpExecutedBlock, OpBlockError>
where
    S: DatabaseRef<Error: DBErrorMarker + std::fmt::Display> + NodeReader,
{
    let mut block = OpBlockBuilder::open(config, parent, attributes, state)?;
    for (index, raw) in attributes.transactions.iter().enumerate() {
        let tx = OpTx::decode_2718(raw).map_err(|e| OpBlockError::Transaction { index, reason: e.to_string() })?;
        block.push(tx)?;
    }
    block.finish()
}

type OpBlockEvm<'s, S> = DefaultOpEvm<OpContext<CacheDB<&'s S>>>;

/// A block being built on op-revm: opened from its parent and context (the system calls
/// run), then transactions one at a time (the L1-info deposit first, as every OP block
/// starts), then sealed into its header. `execute` runs op-node's attributes through it; a
/// block producer pushes its pool's transactions the same way and skips the ones refused.
pub struct OpBlockBuilder<'s, S: DatabaseRef> {
    config: &'s OpConfig,
    state: &'s S,
    parent: Header,
    attributes: Attributes,
    spec: OpSpecId,
    base_fee: u64,
    evm: OpBlockEvm<'s, S>,
    txs: Vec<OpExecutedTx>,
    cumulative: u64,
    /// Jovian: the DA footprint of the transactions so far (the header's `blobGasUsed`).
    da_footprint: u64,
}

impl<'s, S> OpBlockBuilder<'s, S>
where
    S: DatabaseRef<Error: DBErrorMarker + std::fmt::Display> + NodeReader,
{
    /// The block after `parent` in the context `attributes` give (their transactions are
    /// not run: `push` them), with the fork's system calls done.
    pub fn open(
        config: &'s OpConfig,
        parent: &Header,
        attributes: &Attributes,
        state: &'s S,
    ) -> Result<Self, OpBlockError> {
        let number = parent.number + 1;
        let timestamp = attributes.timestamp;
        let spec = config.spec_at(timestamp);
        let base_fee = crate::header::next_base_fee(config, parent, timestamp);
        let block_env = BlockEnv {
            number: U256::from(number),
            beneficiary: attributes.fee_recipient,
            timestamp: U256::from(timestamp),
            gas_limit: attributes.gas_limit,
            basefee: base_fee,
            difficulty: U256::ZERO,
            prevrandao: Some(attributes.prev_randao),
            // OP blocks carry no blobs: from Ecotone the blob base fee is the minimum.
            blob_excess_gas_and_price: spec.is_enabled_in(OpSpecId::ECOTONE).then(|| {
                revm::context_interface::block::BlobExcessGasAndPrice::new(
                    0,
                    alloy_eips::eip4844::BLOB_GASPRICE_UPDATE_FRACTION as u64,
                )
            }),
            slot_num: 0,
        };
        let mut cfg = CfgEnv::new_with_spec(spec);
        cfg.chain_id = config.chain_id;
        let ctx = Context::op()
            .with_db(CacheDB::new(state))
            .with_block(block_env)
            .with_cfg(cfg)
            .with_chain(L1BlockInfo::default());
        let mut evm = ctx.build_op();

        let fail = |e: String| OpBlockError::SystemCall(e);
        // EIP-4788 from Ecotone (Cancun's EVM), EIP-2935 from Isthmus (Prague's).
        if let (true, Some(root)) = (spec.is_enabled_in(OpSpecId::ECOTONE), attributes.parent_beacon_block_root) {
            system_call(&mut evm, eip4788::BEACON_ROOTS_ADDRESS, root.0.into()).map_err(fail)?;
        }
        if spec.is_enabled_in(OpSpecId::ISTHMUS) {
            system_call(&mut evm, eip2935::HISTORY_STORAGE_ADDRESS, parent.hash_slow().0.into()).map_err(fail)?;
        }
        if config.is_first_block_of(OpSpecId::CANYON, timestamp, parent.timestamp) {
            canyon::set_create2_deployer(&mut evm.0.ctx.journaled_state.database)
                .map_err(|e| OpBlockError::State(e.to_string()))?;
        }
        let attributes = Attributes { transactions: Vec::new(), ..attributes.clone() };
        Ok(Self {
            config,
            state,
            parent: parent.clone(),
            attributes,
            spec,
            base_fee,
            evm,
            txs: Vec::new(),
            cumulative: 0,
            da_footprint: 0,
        })
    }

    pub fn spec(&self) -> OpSpecId {
        self.spec
    }

    pub fn base_fee(&self) -> u64 {
        self.base_fee
    }

    /// The gas the block has left for transactions.
    pub fn gas_left(&self) -> u64 {
        self.attributes.gas_limit.saturating_sub(self.cumulative)
    }

    pub fn txs(&self) -> &[OpExecutedTx] {
        &self.txs
    }

    /// An account as the block has left it so far (`None`: it does not exist).
    pub fn account(&mut self, address: Address) -> Result<Option<revm::state::AccountInfo>, OpBlockError> {
        revm::Database::basic(&mut self.evm.0.ctx.journaled_state.database, address)
            .map_err(|e| OpBlockError::State(e.to_string()))
    }

    /// Runs `tx` and keeps it in the block. A transaction op-revm refuses (nonce, funds,
    /// gas beyond the block's) leaves the block as it was and is the error.
    pub fn push(&mut self, tx: OpTx) -> Result<&OpExecutedTx, OpBlockError> {
        let index = self.txs.len();
        let invalid = |reason: String| OpBlockError::Transaction { index, reason };
        // Before Regolith a deposit uses no block gas.
        let uses_block_gas = !tx.is_deposit() || self.spec.is_enabled_in(OpSpecId::REGOLITH);
        if uses_block_gas && tx.gas_limit() > self.gas_left() {
            return Err(invalid(format!(
                "gas limit {} above the block's remaining {}",
                tx.gas_limit(),
                self.gas_left()
            )));
        }
        // Jovian: the block's DA footprint is bounded by its gas limit, as its gas is.
        let da_footprint = match (tx.is_deposit(), self.spec.is_enabled_in(OpSpecId::JOVIAN)) {
            (false, true) => self.da_footprint_of(&tx)?,
            _ => 0,
        };
        if self.da_footprint + da_footprint > self.attributes.gas_limit {
            return Err(invalid(format!(
                "DA footprint {da_footprint} above the block's remaining {}",
                self.attributes.gas_limit - self.da_footprint
            )));
        }
        let sender = tx.sender().map_err(|e| invalid(e.to_string()))?;
        let deposit_nonce = match tx.is_deposit() {
            true => Some(self.account(sender)?.map_or(0, |a| a.nonce)),
            false => None,
        };
        let out = self.evm.transact(tx.to_op_env(sender)).map_err(|e| invalid(e.to_string()))?;
        self.evm.commit(out.state);
        let gas_used = out.result.tx_gas_used();
        self.cumulative += gas_used;
        self.da_footprint += da_footprint;
        let success = out.result.is_success();
        let logs = match out.result {
            ExecutionResult::Success { logs, .. } => logs,
            _ => Vec::new(),
        };
        self.txs.push(OpExecutedTx {
            tx,
            sender,
            success,
            gas_used,
            cumulative_gas_used: self.cumulative,
            logs,
            deposit_nonce,
        });
        Ok(self.txs.last().expect("just pushed"))
    }

    /// Jovian: a transaction's DA footprint, its Fjord size estimate (FastLZ, at least 100
    /// bytes) times the DA footprint gas scalar the block's L1-info deposit left in L1Block.
    fn da_footprint_of(&mut self, tx: &OpTx) -> Result<u64, OpBlockError> {
        let db = &mut self.evm.0.ctx.journaled_state.database;
        let scalar = L1BlockInfo::fetch_da_footprint_gas_scalar(db).map_err(|e| OpBlockError::State(e.to_string()))?;
        Ok(crate::l1info::da_footprint(&tx.encoded_2718(), scalar))
    }

    /// The DA footprint of the block so far (Jovian; zero before).
    pub fn da_footprint(&self) -> u64 {
        self.da_footprint
    }

    /// The block's header over everything pushed (state root, transactions and receipts
    /// roots, each fork's fields), and its transactions.
    pub fn finish(self) -> Result<OpExecutedBlock, OpBlockError> {
        let Self { config, state, parent, attributes, spec, base_fee: _, evm, txs, cumulative, da_footprint } = self;
        let db = &evm.0.ctx.journaled_state.database;
        let updates = account_updates(db, state)?;
        let (state_root, diff) = state_root(state, &updates)?;

        let canyon = spec.is_enabled_in(OpSpecId::CANYON);
        let tx_leaves: Vec<Vec<u8>> = txs.iter().map(|t| t.tx.encoded_2718()).collect();
        let receipt_leaves: Vec<Vec<u8>> = txs.iter().map(|t| encode_receipt(t, canyon)).collect();
        let mut logs_bloom = Bloom::default();
        for t in &txs {
            logs_bloom.accrue_bloom(&alloy_primitives::logs_bloom(t.logs.iter()));
        }
        // The context's fields (base fee, extraData, each fork's) as the sequencer opens its block.
        let mut header = crate::header::attributes_header(config, &parent, parent.hash_slow(), &attributes);
        header.state_root = state_root;
        header.transactions_root = ordered_root(&tx_leaves);
        header.receipts_root = ordered_root(&receipt_leaves);
        header.logs_bloom = logs_bloom;
        header.gas_used = cumulative;
        if spec.is_enabled_in(OpSpecId::ISTHMUS) {
            header.withdrawals_root = Some(message_passer_root(&diff, state)?);
        }
        // Jovian: the DA footprint (zero before, where the field exists from Ecotone).
        if spec.is_enabled_in(OpSpecId::ECOTONE) {
            header.blob_gas_used = Some(da_footprint);
        }
        Ok(OpExecutedBlock { header, txs })
    }
}

fn ordered_root(leaves: &[Vec<u8>]) -> B256 {
    alloy_trie::root::ordered_trie_root_with_encoder(leaves, |leaf, out| out.put_slice(leaf))
}

/// A system call folded into the block (the beacon-root and history contracts are skipped
/// when absent, as op-geth does).
fn system_call<E>(evm: &mut E, address: Address, input: Bytes) -> Result<(), String>
where
    E: SystemCallEvm + ExecuteCommitEvm,
    E::Error: std::fmt::Display,
{
    let out = evm.system_call(address, input).map_err(|e| e.to_string())?;
    evm.commit(out.state);
    Ok(())
}

/// What the block changed, for the state trie: every account the EVM wrote, read back from
/// the overlay the transactions were committed to.
fn account_updates<S>(db: &CacheDB<&S>, base: &S) -> Result<Vec<AccountUpdate>, OpBlockError>
where
    S: DatabaseRef<Error: DBErrorMarker + std::fmt::Display>,
{
    let mut updates = BTreeMap::new();
    for (address, account) in &db.cache.accounts {
        let hashed_address = keccak256(address);
        let existed = || base.basic_ref(*address).map(|a| a.is_some()).map_err(|e| OpBlockError::State(e.to_string()));
        let update = match account.account_state {
            AccountState::None => continue,
            AccountState::NotExisting => {
                if !existed()? {
                    continue;
                }
                AccountUpdate { hashed_address, account: None, storage_wiped: true, storage: Vec::new() }
            }
            AccountState::Touched | AccountState::StorageCleared => {
                let info = &account.info;
                // EIP-161: an account the block touched and left empty is removed.
                if info.nonce == 0 && info.balance.is_zero() && info.code_hash == KECCAK_EMPTY {
                    if !existed()? {
                        continue;
                    }
                    AccountUpdate { hashed_address, account: None, storage_wiped: true, storage: Vec::new() }
                } else {
                    AccountUpdate {
                        hashed_address,
                        account: Some(AccountFields {
                            nonce: info.nonce,
                            balance: info.balance,
                            code_hash: info.code_hash,
                        }),
                        storage_wiped: account.account_state == AccountState::StorageCleared,
                        storage: account
                            .storage
                            .iter()
                            .map(|(slot, value)| (keccak256(B256::from(*slot)), *value))
                            .collect(),
                    }
                }
            }
        };
        updates.insert(hashed_address, update);
    }
    Ok(updates.into_values().collect())
}

/// Isthmus: the L2ToL1MessagePasser's storage root after the block, read from the account
/// leaf of the post-state (the block's trie diff over the state it was built on), so it is
/// the root `eth_getProof` would give at this block.
pub fn message_passer_root<S: NodeReader>(diff: &TrieDiff, state: &S) -> Result<B256, TrieError> {
    let post = Overlay::new(diff, state);
    let proof = account_proof(&post, keccak256(L2_TO_L1_MESSAGE_PASSER), &[])?;
    Ok(proof.account.map_or(EMPTY_ROOT_HASH, |a| a.storage_root))
}

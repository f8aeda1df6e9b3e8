//! eth_sendRawTransaction: decode, validate against the newest pending state, journal,
//! then pool. The hash is returned only once the transaction is durable.

use std::collections::HashMap;
use std::sync::Arc;

use alloy_consensus::{transaction::SignerRecoverable, Header, Transaction, TxEnvelope};
use alloy_eips::eip2718::Decodable2718;
use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_rpc_types_eth::TransactionRequest;
use parking_lot::Mutex;
use revm::context_interface::cfg::gas::calculate_initial_tx_gas_for_tx;
use revm::database_interface::WrapDatabaseRef;

use super::blobs;
use super::execution::Execution;
use super::fees::Fees;
use super::impersonation::{self, Impersonation};
use crate::chain_state::ChainState;
use crate::config::{ChainConfig, Profile};
use crate::error::{Cause, ChainResult, InternalError, InvalidParam, InvalidTx, NotLeader, Rejection, StoreFault};
use crate::exec::tx_env_from_signed;
use crate::genesis::DevAccount;
use crate::pool::PooledTx;
use crate::state::StateView;
use crate::types::BlockId;

fn tx_blob_gas(tx: &TxEnvelope) -> u64 {
    tx.blob_versioned_hashes().map_or(0, |h| h.len() as u64 * alloy_eips::eip4844::DATA_GAS_PER_BLOB)
}

/// geth's txMaxSize: 4 slots of 32 KiB.
pub const MAX_TX_BYTES: usize = 128 * 1024;

pub struct Submission {
    chain: Arc<ChainState>,
    exec: Arc<Execution>,
    fees: Arc<Fees>,
    dev_accounts: Vec<DevAccount>,
    /// Senders eth_sendTransaction accepts without a key (the test methods set them).
    impersonation: Impersonation,
    /// Serialises eth_sendTransaction per sender so concurrent sends get consecutive nonces.
    send_locks: SenderLocks,
}

/// One lock per sender whose nonce eth_sendTransaction is picking, held from the pick to
/// the pool (the estimate in between may wait for a fork's upstream): one sender's sends
/// take turns, in the order they took the lock, and other senders' sends do not wait for
/// them. An entry lives only while a send holds or waits for it.
#[derive(Default)]
struct SenderLocks(Mutex<HashMap<Address, Arc<Mutex<()>>>>);

impl SenderLocks {
    fn run<T>(&self, sender: Address, f: impl FnOnce() -> T) -> T {
        struct Release<'a>(&'a SenderLocks, Address, Arc<Mutex<()>>);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                let mut held = self.0 .0.lock();
                // The map's reference and this one: no other send holds or waits for it.
                if Arc::strong_count(&self.2) == 2 {
                    held.remove(&self.1);
                }
            }
        }
        let lock = Arc::clone(self.0.lock().entry(sender).or_default());
        let release = Release(self, sender, lock);
        let _guard = release.2.lock();
        f()
    }
}

impl Submission {
    pub fn new(chain: Arc<ChainState>, exec: Arc<Execution>, fees: Arc<Fees>, dev_accounts: Vec<DevAccount>) -> Self {
        if takes_blobs(chain.config()) {
            blobs::load_kzg_settings_in_background();
        }
        Self {
            chain,
            exec,
            fees,
            dev_accounts,
            impersonation: Impersonation::default(),
            send_locks: SenderLocks::default(),
        }
    }

    /// Senders eth_sendTransaction accepts without a key (`anvil_impersonateAccount`).
    pub fn impersonation(&self) -> &Impersonation {
        &self.impersonation
    }

    /// Accounts eth_sendTransaction signs for (the dev chain's, whose keys are public;
    /// none on other chains).
    pub fn dev_accounts(&self) -> &[DevAccount] {
        &self.dev_accounts
    }

    /// Blob transactions are taken only by `--profile geth` serving a stored chain: the
    /// product's chain has no blobs, and nothing here executes what the pool holds.
    fn accepts_blobs(&self) -> bool {
        takes_blobs(self.chain.config())
    }

    fn pending_nonce(&self, sender: &Address) -> ChainResult<u64> {
        self.chain.view().pending_state().nonce(sender)
    }

    /// Accepts a signed transaction into the pool; returns its hash once it is durable: in
    /// the pool journal, or, on a cluster's leader, in the replicated log.
    pub fn submit_raw(&self, raw: Bytes) -> ChainResult<B256> {
        if let Some(reason) = self.chain.store_fault() {
            return Err(StoreFault::RefusesTransactions { reason }.into());
        }
        let ptx = self.validate_raw(raw)?;
        let record = ptx.raw.clone();
        self.accept(ptx, record)
    }

    /// Pools a validated transaction once `record` (what the journal keeps of it) is durable.
    fn accept(&self, ptx: PooledTx, record: Bytes) -> ChainResult<B256> {
        let hash = ptx.hash;
        let state_nonce = self.pending_nonce(&ptx.sender)?;
        self.chain.pool_accepts(&ptx, state_nonce)?;
        if self.chain.config().cluster {
            let ledger = self.chain.ledger().ok_or(NotLeader::Follows)?;
            ledger.append_tx(ptx.raw.clone()).map_err(NotLeader::from)?;
            self.journal_buffered(hash, &ptx.raw);
        } else if let Some(journal) = &self.chain.journal() {
            journal.append(hash, &record).map_err(|e| StoreFault::CannotJournal(Cause::new(e)))?;
        }
        let added = self.chain.add_to_pool(ptx, state_nonce)?;
        if let Some(journal) = &self.chain.journal() {
            journal.forget(added.replaced.iter().chain(added.evicted.iter()));
        }
        self.chain.events().send_pooled(hash);
        Ok(hash)
    }

    /// A transaction a cluster's leader accepted, read from the log by another node: into
    /// this node's pool, so that if it leads next it has every accepted transaction.
    /// Refusals are expected (already pooled, or included since) and change nothing.
    pub fn admit_replicated(&self, raw: Bytes) -> ChainResult<B256> {
        let ptx = self.validate_raw(raw)?;
        let hash = ptx.hash;
        let state_nonce = self.pending_nonce(&ptx.sender)?;
        let raw = ptx.raw.clone();
        self.chain.add_to_pool(ptx, state_nonce)?;
        self.journal_buffered(hash, &raw);
        Ok(hash)
    }

    /// A clustered node's journal only spares a restart from reading the log again; the
    /// log is what makes a transaction durable, so nothing waits for the disk here.
    fn journal_buffered(&self, hash: B256, raw: &Bytes) {
        if let Some(journal) = &self.chain.journal() {
            if let Err(e) = journal.append_buffered(hash, raw) {
                crate::log::warn("pool", "pool journal append failed", serde_json::json!({ "error": e.to_string() }));
            }
        }
    }

    /// Stateless and state checks, in geth's words.
    pub fn validate_raw(&self, raw: Bytes) -> ChainResult<PooledTx> {
        let blob = raw.first() == Some(&3);
        if raw.len() > MAX_TX_BYTES && !(blob && self.accepts_blobs()) {
            return Err(Rejection::Oversized { size: raw.len(), limit: MAX_TX_BYTES }.into());
        }
        match raw.first() {
            None => return Err(InvalidParam::EmptyTx.into()),
            Some(3) if !self.accepts_blobs() => return Err(Rejection::NoBlobsOnThisChain.into()),
            // An OP deposit (0x7E) carries no signature: it enters only through the chain
            // (imported blocks, payload attributes). op-geth's pool refuses it in these words.
            Some(&preconf_op::deposit::DEPOSIT_TX_TYPE) => return Err(InvalidTx::TypeNotSupported.into()),
            Some(t) if *t > 4 && *t < 0xc0 => return Err(Rejection::TypeNotSupported(*t).into()),
            _ => {}
        }
        let tx = if blob {
            blobs::decode_blob_tx(&raw, self.chain.spec(), self.chain.view().pending_header().timestamp)?
        } else {
            TxEnvelope::decode_2718_exact(&raw).map_err(|e| InvalidParam::Undecodable(e.to_string()))?
        };
        let sender = tx.recover_signer().map_err(|_| Rejection::InvalidSender)?;
        self.validate_from(tx, raw, sender)
    }

    /// The checks after the sender is known (recovered, or impersonated).
    fn validate_from(&self, tx: TxEnvelope, raw: Bytes, sender: Address) -> ChainResult<PooledTx> {
        if let Some(id) = tx.chain_id() {
            if id != self.chain.chain_id() {
                return Err(Rejection::ChainId { have: id, want: self.chain.chain_id() }.into());
            }
        }
        let view = self.chain.view();
        let context = view.pending_header();
        let spec_id = self.chain.spec().spec_at(context.number, context.timestamp);
        if tx.is_eip7702() && !spec_id.is_enabled_in(revm::primitives::hardfork::SpecId::PRAGUE) {
            return Err(InvalidTx::TypeNotSupported.into());
        }
        if tx.gas_limit() > context.gas_limit {
            return Err(InvalidTx::GasLimitAboveBlock.into());
        }
        let env = tx_env_from_signed(&tx, sender);
        let intrinsic = calculate_initial_tx_gas_for_tx(&env, spec_id);
        let need = intrinsic.initial_total_gas.max(intrinsic.floor_gas);
        if tx.gas_limit() < need {
            return Err(InvalidTx::IntrinsicGasTooLow { have: tx.gas_limit(), want: need }.into());
        }
        if let Some(tip) = tx.max_priority_fee_per_gas() {
            if tip > tx.max_fee_per_gas() {
                return Err(InvalidTx::TipAboveFeeCapOf { sender, tip, max_fee: tx.max_fee_per_gas() }.into());
            }
        }
        let base_fee = context.base_fee_per_gas.unwrap_or_default();
        if tx.max_fee_per_gas() < base_fee as u128 {
            return Err(InvalidTx::FeeCapBelowBaseFee { sender, max_fee: tx.max_fee_per_gas(), base_fee }.into());
        }
        super::prefetch::signed(&self.chain, sender, &tx);
        let ptx = PooledTx::new(tx, raw, sender);
        let state = view.pending_state();
        let account = state.account(&sender)?;
        let nonce = account.map(|a| a.nonce).unwrap_or_default();
        if ptx.nonce < nonce {
            return Err(InvalidTx::NonceTooLow { sender, tx: ptx.nonce, state: nonce }.into());
        }
        let balance = account.map(|a| a.balance).unwrap_or(U256::ZERO);
        // A blob transaction also pays for its blob gas at its blob fee cap.
        let blob_gas = tx_blob_gas(&ptx.tx);
        let cost = ptx.cost() + U256::from(blob_gas) * U256::from(ptx.tx.max_fee_per_blob_gas().unwrap_or_default());
        // On an OP chain op-revm also takes the L1 data fee from the balance: counted here as
        // op-geth's pool counts it, so a sender who cannot pay it is told now rather than the
        // transaction being dropped when the builder runs it.
        let cost = cost.saturating_add(self.op_fee_charge(&state, context, &ptx)?);
        if balance < cost {
            return Err(InvalidTx::CostAboveBalance { balance, cost }.into());
        }
        Ok(ptx)
    }

    /// The L1 data fee (and operator fee) op-revm charges `ptx` in the pending block, read
    /// from its L1Block predeploy; zero on an Ethereum chain.
    fn op_fee_charge(&self, state: &StateView, context: &Header, ptx: &PooledTx) -> ChainResult<U256> {
        let Some(op) = self.chain.spec().op() else { return Ok(U256::ZERO) };
        let spec = op.spec_at(context.timestamp);
        let mut db = WrapDatabaseRef(state);
        preconf_op::l1info::tx_fee_charge(&mut db, context.number, spec, &ptx.raw, ptx.tx.gas_limit())
    }

    /// Replays the journal after a restart: every record goes through validation again;
    /// included or no-longer-valid ones are dropped, the rest return to the pool. Those sent
    /// for an impersonated sender are dropped too unless the test methods are on (`dev`):
    /// no key signed them.
    pub fn replay_journal(&self, records: Vec<Bytes>, dev: bool) -> (usize, usize) {
        let Some(journal) = &self.chain.journal() else { return (0, 0) };
        let (mut kept, mut dropped) = (0, 0);
        for raw in records {
            let result = self.validate_record(raw.clone(), dev).and_then(|ptx| {
                let nonce = self.pending_nonce(&ptx.sender)?;
                let hash = ptx.hash;
                self.chain.add_to_pool(ptx, nonce)?;
                Ok(hash)
            });
            match result {
                Ok(hash) => {
                    journal.register(hash, raw);
                    kept += 1;
                }
                Err(_) => dropped += 1,
            }
        }
        if let Err(e) = journal.compact() {
            crate::log::warn("pool", "pool journal compaction failed", serde_json::json!({ "error": e.to_string() }));
        }
        (kept, dropped)
    }

    /// A journal record: a signed transaction, or one sent for an impersonated sender.
    fn validate_record(&self, record: Bytes, dev: bool) -> ChainResult<PooledTx> {
        match impersonation::parse_journal_record(&record) {
            Some(_) if !dev => Err(Rejection::ImpersonatedWithoutDev.into()),
            Some((sender, raw)) => {
                let tx = TxEnvelope::decode_2718_exact(&raw).map_err(|e| InvalidParam::Undecodable(e.to_string()))?;
                self.validate_from(tx, raw, sender)
            }
            None => self.validate_raw(record),
        }
    }

    /// eth_sendTransaction for the embedded dev chain's accounts (whose keys are public),
    /// and for senders the test methods impersonate: fills nonce, gas and fees like a
    /// wallet would, signs, and submits. Other senders are refused: the node holds no keys.
    pub fn send_transaction(&self, req: &TransactionRequest) -> ChainResult<B256> {
        self.send_as(req, false)
    }

    /// eth_sendUnsignedTransaction (`--dev`): from any sender, with no key at all.
    pub fn send_unsigned(&self, req: &TransactionRequest) -> ChainResult<B256> {
        self.send_as(req, true)
    }

    fn send_as(&self, req: &TransactionRequest, unsigned: bool) -> ChainResult<B256> {
        use alloy_primitives::Signature;
        use alloy_signer::SignerSync;
        use alloy_signer_local::PrivateKeySigner;

        let from = req.from.ok_or(InvalidParam::MissingFrom)?;
        // A dev account's key, or none: an impersonated sender gets a placeholder signature.
        let key = match self.dev_accounts.iter().find(|a| a.address == from) {
            Some(account) if !unsigned => Some(
                PrivateKeySigner::from_bytes(&account.private_key)
                    .map_err(|e| InternalError::Signing(Cause::new(e)))?,
            ),
            _ if unsigned || self.impersonation.covers(&from) => None,
            _ => return Err(Rejection::UnknownAccount.into()),
        };
        let sign = |hash: B256| -> ChainResult<Signature> {
            match &key {
                Some(k) => k.sign_hash_sync(&hash).map_err(|e| InternalError::Signing(Cause::new(e)).into()),
                None => Ok(impersonation::placeholder_signature(from)),
            }
        };
        // A nonce given is the client's: nothing to pick, no lock (forge's broadcasts give theirs).
        match req.nonce {
            Some(nonce) => self.sign_and_send(req, from, nonce, &sign, key.is_some()),
            // One at a time per sender, so two concurrent sends never pick the same nonce.
            None => self.send_locks.run(from, || {
                let (pooled, view) = self.chain.with_pool(|pool| pool.nonces_of(&from));
                let nonce = crate::pool::next_nonce(view.pending_state().nonce(&from)?, &pooled);
                self.sign_and_send(req, from, nonce, &sign, key.is_some())
            }),
        }
    }

    /// Fills gas and fees of `req` at `nonce`, signs (`signed`: with a key, else for an
    /// impersonated sender) and submits.
    fn sign_and_send(
        &self,
        req: &TransactionRequest,
        from: Address,
        nonce: u64,
        sign: &dyn Fn(B256) -> ChainResult<alloy_primitives::Signature>,
        signed: bool,
    ) -> ChainResult<B256> {
        use alloy_consensus::{SignableTransaction, TxEip1559, TxLegacy};
        use alloy_eips::eip2718::Encodable2718;
        use alloy_primitives::TxKind;

        let gas_limit = match req.gas {
            Some(g) => g,
            None => self.exec.estimate_gas(req, BlockId::Pending, None)?,
        };
        let to = req.to.unwrap_or(TxKind::Create);
        let value = req.value.unwrap_or_default();
        let input = crate::exec::request::input(req)?;
        let chain_id = self.chain.chain_id();
        let tx = if let Some(gas_price) = req.gas_price {
            let tx = TxLegacy { chain_id: Some(chain_id), nonce, gas_price, gas_limit, to, value, input };
            let sig = sign(tx.signature_hash())?;
            TxEnvelope::from(tx.into_signed(sig))
        } else {
            let base = self.chain.view().pending_header().base_fee_per_gas.unwrap_or_default() as u128;
            let tip = match req.max_priority_fee_per_gas {
                Some(t) => t,
                None => self.fees.suggested_tip()?,
            };
            let max_fee = req.max_fee_per_gas.unwrap_or(2 * base + tip);
            let tx = TxEip1559 {
                chain_id,
                nonce,
                gas_limit,
                max_fee_per_gas: max_fee,
                max_priority_fee_per_gas: tip,
                to,
                value,
                input,
                access_list: req.access_list.clone().unwrap_or_default(),
            };
            let sig = sign(tx.signature_hash())?;
            TxEnvelope::from(tx.into_signed(sig))
        };
        let raw = Bytes::from(tx.encoded_2718());
        if signed {
            return self.submit_raw(raw);
        }
        let record = impersonation::journal_record(&from, &raw);
        let ptx = self.validate_from(tx, raw, from)?;
        self.accept(ptx, record)
    }
}

fn takes_blobs(config: &ChainConfig) -> bool {
    config.profile == Profile::Geth && !config.build
}

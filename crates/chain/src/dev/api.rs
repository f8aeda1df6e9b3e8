//! The test methods as the N-API layer calls them. Changes to the chain are requests to the
//! builder (builder/dev/), answered once they are done; impersonation is the submission
//! path's; a dump reads the published view like any read.

use std::ops::Range;
use std::sync::{mpsc, Arc};

use alloy_primitives::{Address, B256, U256};
use alloy_rpc_types_eth::TransactionRequest;

use super::dump;
use super::erc20::{self, Erc20Entry};
use super::requests::{AccountEdit, DevCall, DevHooks, DevInbox, DevMetadata, DevReply, DevRequest, Mining};
use super::DevError;
use crate::api::submit::Submission;
use crate::chain_state::ChainState;
use crate::error::{ChainError, ChainResult, InternalError, Unavailable};
use crate::fork::{ForkPoint, ForkSource, UpstreamState};
use crate::genesis::seed::{fork_genesis, warm_fork, GenesisSource};

/// anvil_reset's `forking` parameters: another upstream, another block, or both.
#[derive(Clone, Debug, Default)]
pub struct ForkReset {
    /// `jsonRpcUrl`; `None`: the node's upstream.
    pub url: Option<String>,
    /// `blockNumber`; `None`: the upstream's latest.
    pub block: Option<u64>,
}

pub struct DevApi {
    chain: Arc<ChainState>,
    submit: Arc<Submission>,
    calls: mpsc::Sender<DevCall>,
}

impl DevApi {
    /// The test methods' handle, and what the builder that serves them is given.
    pub fn new(chain: Arc<ChainState>, submit: Arc<Submission>, genesis: Option<GenesisSource>) -> (Self, DevHooks) {
        let (calls, inbox) = mpsc::channel();
        (Self { chain, submit, calls }, DevHooks { inbox: DevInbox(inbox), genesis })
    }

    /// Hands `request` to the builder and waits for it to be carried out.
    fn call(&self, request: DevRequest) -> ChainResult<DevReply> {
        self.refuse_when_engine_driven(request.changes_the_chain())?;
        let (reply, answer) = mpsc::sync_channel(1);
        self.calls.send(DevCall { request, reply }).map_err(|_| Unavailable::BuilderGone)?;
        // The builder sleeps on the pool's bell between ticks.
        self.chain.pool_bell().ring();
        answer.recv().map_err(|_| Unavailable::BuilderGone)?
    }

    fn done(&self, request: DevRequest) -> ChainResult<()> {
        self.call(request).map(|_| ())
    }

    /// Changes accounts in the block being built; returns once `pending` shows them.
    pub fn edit(&self, edits: Vec<AccountEdit>) -> ChainResult<()> {
        self.done(DevRequest::Edit(edits))
    }

    /// anvil_dealERC20 / anvil_setERC20Allowance: sets `entry` of `token` to `amount` in the
    /// block being built, at the slot its view function reads (refused when none does).
    pub fn set_erc20(&self, token: Address, entry: Erc20Entry, amount: U256) -> ChainResult<()> {
        let slot = erc20::slot_of(&self.chain, token, entry, amount)?;
        let mut edit = AccountEdit::new(token);
        edit.storage = vec![(slot, amount)];
        self.edit(vec![edit])
    }

    /// Seals `blocks` blocks now; their numbers.
    pub fn mine(&self, blocks: u64, interval: Option<u64>, timestamp: Option<u64>) -> ChainResult<Range<u64>> {
        match self.call(DevRequest::Mine { blocks, interval, timestamp })? {
            DevReply::Mined(numbers) => Ok(numbers),
            other => Err(unexpected(other)),
        }
    }

    /// The clock's total offset after adding `seconds`.
    pub fn increase_time(&self, seconds: u64) -> ChainResult<i64> {
        match self.call(DevRequest::IncreaseTime(seconds))? {
            DevReply::Offset(total) => Ok(total),
            other => Err(unexpected(other)),
        }
    }

    /// The clock reads `timestamp` from now on; how many seconds that moved it forward.
    pub fn set_time(&self, timestamp: u64) -> ChainResult<u64> {
        match self.call(DevRequest::SetTime(timestamp))? {
            DevReply::Forward(seconds) => Ok(seconds),
            other => Err(unexpected(other)),
        }
    }

    pub fn set_next_timestamp(&self, timestamp: u64) -> ChainResult<()> {
        self.done(DevRequest::SetNextTimestamp(timestamp))
    }

    pub fn set_next_base_fee(&self, fee: u64) -> ChainResult<()> {
        self.done(DevRequest::SetNextBaseFee(fee))
    }

    /// The beneficiary of every block opened from now on.
    pub fn set_coinbase(&self, coinbase: Address) -> ChainResult<()> {
        self.done(DevRequest::SetCoinbase(coinbase))
    }

    /// anvil_setMinGasPrice: refused. With EIP-1559 active anvil refuses it too (the base
    /// fee sets the floor); before London this node has no minimum gas price to change.
    pub fn set_min_gas_price(&self) -> ChainResult<()> {
        let eip1559 = self.chain.view().pending_header().base_fee_per_gas.is_some();
        Err(if eip1559 { DevError::MinGasPriceWithEip1559 } else { DevError::NoMinGasPrice }.into())
    }

    /// The gas limit of every block opened from now on.
    pub fn set_block_gas_limit(&self, gas_limit: u64) -> ChainResult<()> {
        self.done(DevRequest::SetGasLimit(gas_limit))
    }

    /// Seconds between the timestamps of the blocks opened from now on (`None`: back to the
    /// clock); whether an interval was set before.
    pub fn set_timestamp_interval(&self, seconds: Option<u64>) -> ChainResult<bool> {
        match self.call(DevRequest::SetTimestampInterval(seconds))? {
            DevReply::Found(was) => Ok(was),
            other => Err(unexpected(other)),
        }
    }

    pub fn set_mining(&self, mining: Mining) -> ChainResult<()> {
        self.done(DevRequest::SetMining(mining))
    }

    /// `evm_setAutomine(false)`: back to how blocks were sealed before automine.
    pub fn stop_automine(&self) -> ChainResult<()> {
        self.done(DevRequest::StopAutomine)
    }

    pub fn mining(&self) -> ChainResult<Mining> {
        match self.call(DevRequest::GetMining)? {
            DevReply::Mining(m) => Ok(m),
            other => Err(unexpected(other)),
        }
    }

    /// A snapshot of everything pre-confirmed so far (sealed first); its id.
    pub fn snapshot(&self) -> ChainResult<u64> {
        match self.call(DevRequest::Snapshot)? {
            DevReply::Id(id) => Ok(id),
            other => Err(unexpected(other)),
        }
    }

    /// Back to snapshot `id`; false when there is no such snapshot (any more).
    pub fn revert(&self, id: u64) -> ChainResult<bool> {
        match self.call(DevRequest::Revert(id))? {
            DevReply::Found(found) => Ok(found),
            other => Err(unexpected(other)),
        }
    }

    /// The instance id and the live snapshots.
    pub fn metadata(&self) -> ChainResult<DevMetadata> {
        match self.call(DevRequest::Metadata)? {
            DevReply::Metadata(m) => Ok(m),
            other => Err(unexpected(other)),
        }
    }

    /// Back to a new genesis, or on a fork to its fork block. `fork`: anvil's `forking`
    /// parameters (another upstream or block), taken only by a node started as a fork.
    pub fn reset(&self, fork: Option<ForkReset>) -> ChainResult<()> {
        match fork {
            None => self.done(DevRequest::Reset),
            Some(fork) => {
                let (source, point) = self.new_fork(&fork)?;
                self.done(DevRequest::ResetFork(ForkSource(source), Box::new(point)))
            }
        }
    }

    /// A client for the fork asked for, attached and warmed, with its fork point: all of it
    /// asked of the upstream here, on the caller's thread, so that a bad URL or block fails
    /// this request while the builder goes on, and the builder only swaps stores.
    fn new_fork(&self, fork: &ForkReset) -> ChainResult<(Arc<dyn UpstreamState>, ForkPoint)> {
        let Some(current) = self.chain.store().upstream() else { return Err(DevError::NoForking.into()) };
        let source = current.source.refork(fork.url.as_deref(), fork.block)?;
        let point = source.fork_point()?;
        // The spec (chain id, fork schedule) is held by every layer from the start: a reset
        // changes the state and the blocks, not the rules.
        let spec = self.chain.spec();
        if point.chain_id != spec.chain_id() {
            return Err(DevError::ForkChainId { current: spec.chain_id(), new: point.chain_id }.into());
        }
        let (now, new) = (&spec.genesis.config, fork_genesis(&point).config);
        if (now.shanghai_time, now.cancun_time, now.prague_time)
            != (new.shanghai_time, new.cancun_time, new.prague_time)
        {
            return Err(DevError::ForkSchedule { block: point.header.number }.into());
        }
        source.attach(&point, self.chain.store().fork_cache(&point));
        warm_fork(source.as_ref(), &point);
        // The seed reads the dev accounts: if the upstream failed them, fail here, before the
        // builder wipes the store.
        for account in crate::genesis::dev_accounts(crate::genesis::DEV_ACCOUNT_COUNT) {
            source.account(&account.address)?;
        }
        Ok((source, point))
    }

    /// Takes a pooled transaction out of the pool; its hash, or `None` if it was not there.
    pub fn drop_transaction(&self, hash: B256) -> ChainResult<Option<B256>> {
        match self.call(DevRequest::DropTx(hash))? {
            DevReply::Dropped(h) => Ok(h),
            other => Err(unexpected(other)),
        }
    }

    pub fn drop_all_transactions(&self) -> ChainResult<()> {
        self.done(DevRequest::DropAll)
    }

    /// Takes every pooled transaction of `sender` out of the pool.
    pub fn drop_transactions_from(&self, sender: Address) -> ChainResult<()> {
        self.done(DevRequest::DropFrom(sender))
    }

    /// Impersonated transactions carry no valid signature: a block holding one is refused
    /// by every node that verifies it, so an engine-driven node takes none (turning it off
    /// is fine).
    pub fn impersonate(&self, address: Address, on: bool) -> ChainResult<()> {
        self.refuse_when_engine_driven(on)?;
        self.submit.impersonation().set(address, on);
        Ok(())
    }

    pub fn auto_impersonate(&self, on: bool) -> ChainResult<()> {
        self.refuse_when_engine_driven(on)?;
        self.submit.impersonation().set_all(on);
        Ok(())
    }

    /// eth_sendUnsignedTransaction: from any sender, without its key.
    pub fn send_unsigned(&self, request: &TransactionRequest) -> ChainResult<B256> {
        self.refuse_when_engine_driven(true)?;
        self.submit.send_unsigned(request)
    }

    fn refuse_when_engine_driven(&self, changes: bool) -> ChainResult<()> {
        match changes && self.chain.engine_driven() {
            true => Err(Unavailable::EngineDriven.into()),
            false => Ok(()),
        }
    }

    /// The state as of the newest pre-confirmation, gzip-compressed in anvil's format.
    pub fn dump_state(&self) -> ChainResult<Vec<u8>> {
        dump::dump(&self.chain)
    }

    /// Applies a dump's accounts as edits of the block being built.
    pub fn load_state(&self, dump: &[u8]) -> ChainResult<()> {
        let edits = dump::edits_of(dump)?;
        self.edit(edits)
    }
}

fn unexpected(reply: DevReply) -> ChainError {
    InternalError::UnexpectedDevReply(format!("{reply:?}")).into()
}

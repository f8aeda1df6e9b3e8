//! The block builder: a thread that, every pre-confirmation interval, executes the pool's
//! executable transactions on top of the block being built and publishes a new immutable
//! view; every `block_time` it seals the block (roots, state root, hash), opens the next
//! one, and hands the sealed block to the committer thread, which writes it to the store
//! in one durable transaction while the next block is pre-confirmed.
//!
//! Inputs: the shared chain state (pool, store with its persisted trie, spec, config).
//! Outputs: published views, `ChainEvent`s, sealed blocks in the store. It owns its thread
//! (and the committer's) and nothing owns it but its handle.

pub(crate) mod block;
mod dev;
mod schedule;
mod seal;
mod sequence;
mod tick;

use std::sync::mpsc::{self, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::chain_state::ChainState;
use crate::commit::{Committer, Landed};
use crate::dev::requests::DevHooks;
use crate::doorbell::Doorbell;
use crate::engine::sequence::Mailbox;
use crate::error::{Cause, ChainError, ChainResult, Fault, InternalError};
use crate::events::ChainEvent;
use crate::ledger::{Ledger, LedgerError, Record};
use crate::log;
use crate::view::{ChainView, PendingBlock};
use crate::warm::APPLY_EVERY;
use crate::wire::{self as codec, Kind};
use block::{unix_now_ms, OpenBlock};
use schedule::{Action, Facts, Schedule};
use tick::Executed;

/// How long an idle builder in sequencer mode sleeps when nothing rings (a request from
/// the Engine API, a landed commit and a stop all ring).
const IDLE_WAKE: Duration = Duration::from_secs(1);

/// How the builder is told to stop.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Seal what was pre-confirmed first (a clean shutdown).
    Seal,
    /// At once, sealing nothing: a cluster's leader stepping down (the log holds what it
    /// showed; the next leader continues from there).
    Abandon,
}

pub struct BuilderHandle {
    stop: mpsc::Sender<Stop>,
    /// What the builder sleeps on: rung after `stop` so it hears at once.
    bell: Arc<Doorbell>,
    thread: Option<JoinHandle<()>>,
}

impl BuilderHandle {
    /// Stops the builder after its current step; it seals the open block if it holds
    /// transactions, so a clean shutdown leaves nothing only pre-confirmed.
    pub fn stop(mut self) {
        self.join(Stop::Seal);
    }

    /// Stops the builder after its current step without sealing: the open block stays as
    /// the log shows it.
    pub fn abandon(mut self) {
        self.join(Stop::Abandon);
    }

    /// Whether the builder thread has ended (a deposed leader's stops by itself).
    pub fn finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    fn join(&mut self, how: Stop) {
        let _ = self.stop.send(how);
        self.bell.ring();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for BuilderHandle {
    fn drop(&mut self) {
        self.join(Stop::Seal);
    }
}

/// Starts the builder on its own thread; returns once the first block is open. With a
/// `ledger` (a cluster's leader) nothing is shown before the ledger holds it, and the block
/// the log shows open is continued rather than opened anew. With `dev` it also serves the
/// test methods (`--dev`, builder/dev/).
pub fn spawn(
    chain: Arc<ChainState>,
    ledger: Option<Arc<dyn Ledger>>,
    dev: Option<DevHooks>,
    sequencer: Arc<Mailbox>,
) -> ChainResult<BuilderHandle> {
    let (stop, stop_rx) = mpsc::channel();
    let bell = chain.pool_bell().clone();
    let (ready_tx, ready_rx) = mpsc::sync_channel(1);
    // revm's EVM is not Send: the builder is created on its own thread and stays there.
    let thread = std::thread::Builder::new()
        .name("preconf-builder".into())
        .spawn(move || match Builder::new(chain, ledger, dev, sequencer) {
            Ok(mut builder) => {
                let serving = builder.sequencing.is_some();
                builder.mailbox.set_serving(serving);
                let _ = ready_tx.send(Ok(()));
                builder.run(stop_rx);
                if serving {
                    builder.mailbox.set_serving(false);
                }
                builder.land_in_flight();
            }
            Err(e) => {
                let _ = ready_tx.send(Err(e));
            }
        })
        .map_err(|e| InternalError::Spawn(Cause::new(e)))?;
    ready_rx.recv().map_err(|_| InternalError::ThreadGone("builder"))??;
    Ok(BuilderHandle { stop, bell, thread: Some(thread) })
}

/// Answers a request the builder served (the Engine API's or a test method's); an internal
/// failure is also the builder's own, and stops it.
fn answer<T>(to: &std::sync::mpsc::SyncSender<ChainResult<T>>, reply: ChainResult<T>) -> ChainResult<()> {
    let fatal = match &reply {
        Err(e @ ChainError::Internal(_)) => Some(e.clone()),
        _ => None,
    };
    let _ = to.send(reply);
    fatal.map_or(Ok(()), Err)
}

struct Builder {
    chain: Arc<ChainState>,
    block: OpenBlock,
    /// The layers of the block being built, as published so far.
    published: Option<Arc<PendingBlock>>,
    committer: Committer,
    /// Executed since the last pre-confirmation, not yet published.
    executed: Executed,
    /// A cluster's leader: every pre-confirmation and seal is in this log before it is shown.
    ledger: Option<Arc<dyn Ledger>>,
    /// The ledger refused an append: stop at once, showing and sealing nothing more.
    fenced: Option<LedgerError>,
    /// The test methods' requests and state (`--dev`).
    dev: Option<dev::DevState>,
    /// Sequencer mode: blocks come only from the Engine API (builder/sequence.rs).
    sequencing: Option<sequence::Sequencing>,
    /// The Engine API's requests (read in sequencer mode only).
    mailbox: Arc<Mailbox>,
}

impl Builder {
    fn new(
        chain: Arc<ChainState>,
        ledger: Option<Arc<dyn Ledger>>,
        dev: Option<DevHooks>,
        mailbox: Arc<Mailbox>,
    ) -> ChainResult<Self> {
        let view = chain.view();
        // A new leader continues the block the stream shows open (a cluster's log, or a
        // static leader's stream read back after a restart); a view opened from the store
        // shows none.
        let shown = view
            .pending
            .clone()
            .filter(|p| p.number() == view.head_number() + 1 && p.block.header.parent_hash == view.head_hash());
        let block = match &shown {
            Some(p) => OpenBlock::resume(&chain, &view, p)?,
            None => OpenBlock::open(&chain, &view)?,
        };
        // The builder sleeps on the pool's bell between ticks: a landed commit rings it.
        let bell = chain.pool_bell().clone();
        let committer = Committer::spawn(chain.clone(), move || bell.ring())?;
        let mut b = Self {
            chain,
            block,
            published: shown.clone(),
            committer,
            executed: Executed::default(),
            ledger,
            fenced: None,
            dev: dev.map(dev::DevState::new),
            sequencing: None,
            mailbox,
        };
        // Driven by the Engine API, nothing is shown beyond the head until op-node starts a
        // block (a block the stream shows open is continued as shown, until then).
        if b.chain.engine_driven() {
            b.sequencing = Some(sequence::Sequencing::continuing(shown.as_deref()));
        }
        if shown.is_none() && b.sequencing.is_none() {
            let view = b.with_pending((*view).clone());
            if let Some(p) = view.pending.clone() {
                let term = b.term();
                b.record(Kind::Pending, p.number(), 0, || {
                    codec::encode_pending(&p.block, term, unix_now_ms(), true, 0, &p.tick)
                })
                .map_err(|e| InternalError::OpenBlock { number: p.number(), source: Cause::new(e) })?;
            }
            b.chain.publish(view);
            b.announce_open();
        }
        Ok(b)
    }

    /// Puts a message in the ledger (a cluster's leader) before it is shown; `Ok` at once
    /// without one. On refusal the builder is fenced: it stops, showing nothing more.
    fn record(
        &mut self,
        kind: Kind,
        number: u64,
        index: u64,
        encode: impl FnOnce() -> Vec<u8>,
    ) -> Result<Option<u64>, LedgerError> {
        let Some(ledger) = &self.ledger else { return Ok(None) };
        match ledger.append(Record { kind, number, index, data: encode() }) {
            Ok(seq) => Ok(Some(seq)),
            Err(e) => {
                let fields = json!({ "block": number, "error": e.to_string() });
                log::error("builder", "builder stopped: the ledger refused an append", fields);
                self.fenced = Some(e.clone());
                Err(e)
            }
        }
    }

    fn term(&self) -> u64 {
        self.ledger.as_ref().map_or(0, |l| l.term())
    }

    /// Executes pooled transactions as they arrive and publishes what it executed at each
    /// tick, so a pre-confirmation goes out on the clock however long its transactions
    /// took to run; every block time it seals. What to do when is the
    /// schedule's (schedule.rs); this loop sleeps and acts.
    fn run(&mut self, stop: mpsc::Receiver<Stop>) {
        let interval = Duration::from_millis(self.chain.config().preconf_interval_ms.max(1));
        let bell = self.chain.pool_bell().clone();
        let now = Instant::now();
        // A new leader shows its first pre-confirmation at once: the old leader's interval
        // already passed while the lease lapsed.
        let first = if self.ledger.is_some() { now } else { now + interval };
        let block_time = Duration::from_millis(self.chain.config().block_time_ms.max(1));
        let mut schedule = Schedule::new(interval, block_time, now, first);
        let mut rung = false;
        loop {
            let stopping = match stop.try_recv() {
                Ok(Stop::Abandon) => return,
                Ok(Stop::Seal) | Err(TryRecvError::Disconnected) => true,
                Err(TryRecvError::Empty) => false,
            };
            if self.fenced.is_some() {
                return;
            }
            while let Some(landed) = self.committer.poll() {
                if let Err(e) = self.land(landed) {
                    return self.fail(e);
                }
            }
            // The test methods' requests (`--dev`), between ticks as they come.
            if let Err(e) = self.serve_dev() {
                return self.fail(e);
            }
            // The Engine API's (sequencer mode): a block started gets its clock from now.
            match self.serve_engine() {
                Ok(true) => {
                    let now = Instant::now();
                    schedule = Schedule::new(interval, block_time, now, now + interval);
                }
                Ok(false) => {}
                Err(e) => return self.fail(e),
            }
            if self.idle() {
                if stopping {
                    break;
                }
                rung = bell.wait_until(Instant::now() + IDLE_WAKE);
                continue;
            }
            let facts = Facts {
                now: Instant::now(),
                rung,
                prefetch_behind: self.block.warm.behind(),
                preconf_index: self.scheduled_preconfs(),
                stopping,
            };
            rung = false;
            match schedule.next(facts) {
                // Asleep until something happens (polling cost an idle node a wake-up a poll).
                Action::Wait { until } => rung = bell.wait_until(until),
                Action::Rest { until } => std::thread::sleep(until.saturating_duration_since(Instant::now())),
                Action::Pass { until } => {
                    self.execute_pool(until);
                    // Idle until the tick: the seal's trie work ahead (crate::warm).
                    self.block.warm.prefetch(until);
                    schedule.passed(Instant::now());
                }
                Action::Tick { due, execute_until, seal } => {
                    self.execute_pool(execute_until);
                    schedule.ticked(Instant::now());
                    self.preconfirm(Some(due));
                    if self.fenced.is_some() {
                        return;
                    }
                    if !seal && schedule.seals_within(Instant::now(), APPLY_EVERY) {
                        self.block.warm.seal_near();
                    }
                    // A store that cannot write: the block stays open (and pre-confirmed)
                    // until the committer lands what it holds; submissions are refused.
                    // Driven by the Engine API, only getPayload seals.
                    let own_clock = self.sequencing.is_none();
                    if own_clock && self.seal_due(seal) && self.chain.store_fault().is_none() {
                        if let Err(e) = self.seal() {
                            return self.fail(e);
                        }
                    }
                }
                Action::Stop => break,
            }
        }
        if !self.executed.included.is_empty() {
            self.preconfirm(None);
        }
        let writable = self.chain.store_fault().is_none();
        // A block op-node did not ask to seal stays unsealed (the pool journal keeps its
        // transactions for the next run).
        if self.holds_anything() && self.fenced.is_none() && writable && self.sequencing.is_none() {
            if let Err(e) = self.seal() {
                log::error("builder", "could not seal the open block at shutdown", json!({ "error": e.to_string() }));
            }
        }
        // A clean stop leaves every sealed block durable (and announced as such); a store
        // that cannot write gets one more try (the journal keeps their transactions).
        self.committer.stop_retrying();
        while let Some(landed) = self.committer.wait() {
            if let Err(e) = self.land(landed) {
                let fields = json!({ "error": e.to_string() });
                log::error("builder", "could not commit the sealed blocks at shutdown", fields);
                break;
            }
        }
    }

    /// A commit is over: shown as the committer says (commit.rs).
    fn land(&mut self, landed: ChainResult<Landed>) -> ChainResult<()> {
        self.committer.show(&self.chain, landed)
    }

    /// Waits until every sealed block is in the store: a savepoint, a restore, a wipe or a
    /// forkchoice's rewind must not race the committer. Refused while the store cannot
    /// write (the committer would retry until it can, and the caller would wait as long).
    fn land_all(&mut self) -> ChainResult<()> {
        if let Some(reason) = self.chain.store_fault() {
            return Err(crate::error::StoreFault::CannotWrite { reason }.into());
        }
        while let Some(landed) = self.committer.wait() {
            self.land(landed)?;
        }
        Ok(())
    }

    /// Whatever way the builder ended, the blocks it sealed are in the log and shown:
    /// they are written before its thread ends (waiting while the store cannot write,
    /// until the node closes), so that a leader that steps down follows on from them.
    fn land_in_flight(&mut self) {
        while let Some(landed) = self.committer.wait() {
            if let Err(e) = self.land(landed) {
                log::error("builder", "could not commit the sealed blocks", json!({ "error": e.to_string() }));
                break;
            }
        }
    }

    fn fail(&mut self, e: ChainError) {
        let fields = json!({ "block": self.block.header.number, "error": e.to_string() });
        log::error("builder", "builder stopped", fields);
        self.chain.set_unhealthy(Fault::BuilderStopped(e));
    }

    /// `view` with the open block as its pending block: one more overlay layer holding
    /// what changed since the last pre-confirmation.
    fn with_pending(&mut self, mut view: ChainView) -> ChainView {
        if !self.chain.config().preconf {
            view.pending = None;
            return view;
        }
        let b = &mut self.block;
        let layer = Arc::new(std::mem::take(&mut b.tick));
        let header = b.current_header();
        let pending = Arc::new(match &self.published {
            Some(p) => p.next(header, &b.txs[p.block.txs.len()..], b.preconf_index, layer),
            None => PendingBlock::start(header, b.txs.clone(), b.preconf_index, layer),
        });
        self.published = Some(pending.clone());
        view.pending = Some(pending);
        view
    }

    /// Tells listeners about the block just opened (pre-confirmation 0).
    fn announce_open(&mut self) {
        let Some(p) = &self.published else { return };
        // What it opened with (an OP block's deposits) is announced here: the next
        // pre-confirmation's new transactions start after them (a replica checks that).
        self.block.announced = p.block.txs.len();
        let changes = p.tick.clone();
        self.chain.events().send(ChainEvent::Opened { block: p.block.clone(), unix_ms: unix_now_ms(), changes });
    }

    /// Tells listeners about the pre-confirmation just published.
    fn announce_preconf(&mut self) {
        let Some(p) = &self.published else { return };
        let first_new = self.block.announced;
        self.block.announced = self.block.txs.len();
        let changes = p.tick.clone();
        self.chain.events().send(ChainEvent::Preconfirmed {
            block: p.block.clone(),
            first_new,
            unix_ms: unix_now_ms(),
            changes,
        });
    }
}

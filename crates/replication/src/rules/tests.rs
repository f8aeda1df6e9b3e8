//! One test per rule, fed events by hand: no NATS server, no clock but the instants given.

use std::time::{Duration, Instant};

use preconf_chain::ledger::LedgerError;
use preconf_chain::wire::Kind;

use super::catch_up::{self, Behind, Delivery, GapReport, Gaps, Reading};
use super::election::{self, Campaign, Ended, Fitness, LeaseValue, Look, Seen};
use super::fence::{self, Answer, Found, Settled, Step};
use super::term::{self, Deposed, Event, FirstMessage, Leading, Observed, Takeover, Term, LOOK};

const LEASE: Duration = Duration::from_millis(1000);
const BLOCK: Duration = Duration::from_millis(200);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn value(node: &str, term: u64, released: bool) -> LeaseValue {
    LeaseValue { node: node.into(), url: format!("http://{node}"), term, released }
}

fn seen(at: Instant, v: Option<LeaseValue>) -> Seen {
    Seen { revision: 7, value: v, at, read: true }
}

#[test]
fn a_lease_is_held_for_one_duration_from_when_its_revision_arrived() {
    let t0 = Instant::now();
    let s = seen(t0, Some(value("a", 3, false)));
    assert_eq!(s.holder(t0 + ms(999), LEASE).map(|v| v.node.as_str()), Some("a"));
    assert!(s.holder(t0 + LEASE, LEASE).is_none(), "lapsed after a whole duration without a renewal");
    assert!(!s.open(t0 + ms(999), LEASE));
    assert!(s.open(t0 + LEASE, LEASE));
}

#[test]
fn a_released_lease_is_open_at_once_and_keeps_its_term() {
    let t0 = Instant::now();
    let s = seen(t0, Some(value("a", 3, true)));
    assert!(s.holder(t0, LEASE).is_none());
    assert!(s.open(t0, LEASE));
    assert_eq!(s.next_term(), 4, "terms never repeat");
}

#[test]
fn nothing_is_open_before_the_lease_was_read_and_the_first_term_is_one() {
    let t0 = Instant::now();
    let unseen = Seen::unseen(t0);
    assert!(!unseen.open(t0 + LEASE * 10, LEASE), "a node that has not read the key knows nothing");
    let empty = Seen { read: true, ..Seen::unseen(t0) };
    assert!(empty.open(t0, LEASE));
    assert_eq!(empty.next_term(), 1);
}

#[test]
fn a_follower_campaigns_for_the_next_term_only_once_the_lease_is_open() {
    let t0 = Instant::now();
    let c = Campaign::new(LEASE, t0);
    let held = seen(t0, Some(value("a", 5, false)));
    assert_eq!(c.look(t0 + ms(10), &held), Look::Follow);
    assert_eq!(c.leader(t0 + ms(10), &held).map(|v| v.term), Some(5));
    assert_eq!(c.look(t0 + LEASE, &held), Look::Campaign { term: 6 });
    assert_eq!(c.leader(t0 + LEASE, &held), None);
}

#[test]
fn after_leading_a_node_backs_off_longer_the_worse_its_term_ended() {
    let t0 = Instant::now();
    let open = seen(t0, Some(value("a", 5, true)));
    for (how, leases) in [(Ended::Deposed, 1), (Ended::TakeoverFailed, 2), (Ended::CouldNotProduce, 4)] {
        let mut c = Campaign::new(LEASE, t0);
        c.ended(t0, how);
        let until = t0 + LEASE * leases;
        assert_eq!(c.look(until - ms(1), &open), Look::Follow, "{how:?}: still backing off");
        assert_eq!(c.look(until, &open), Look::Campaign { term: 6 }, "{how:?}: may campaign again");
    }
}

#[test]
fn a_quiet_watch_is_checked_by_a_read_before_a_live_leaders_lease_would_seem_lapsed() {
    // The watch brought revision 7 at t0, then nothing (its NATS server was killed) while the
    // leader went on renewing: revision 9 by the time the node reads the key.
    let t0 = Instant::now();
    let c = Campaign::new(LEASE, t0);
    let watched = seen(t0, Some(value("a", 3, false)));
    let quiet = election::watch_quiet_after(LEASE);
    assert!(quiet + term::renew_every(LEASE) < LEASE, "read while the lease the watch saw still runs");
    let read_at = t0 + quiet;
    assert!(watched.superseded_by(9));
    let read = Seen { revision: 9, at: read_at, ..watched.clone() };
    // Where the stale view would campaign for a lease that is held (a take refused forever,
    // writes answered "no leader"), the read one follows the leader.
    assert_eq!(c.look(t0 + LEASE, &watched), Look::Campaign { term: 4 });
    assert_eq!(c.look(t0 + LEASE, &read), Look::Follow);
    assert_eq!(c.leader(t0 + LEASE, &read).map(|v| v.node.as_str()), Some("a"));
    // The same revision read again is no news: a dead leader's lease still lapses on time.
    assert!(!watched.superseded_by(7) && !watched.superseded_by(6));
}

#[test]
fn a_node_campaigns_only_when_fit_and_holding_the_whole_stream() {
    let fit = Fitness { applied: 10, ..Fitness::default() };
    assert_eq!(election::unfit(&fit), None);
    let stopped = Fitness { stopped: true, ..fit.clone() };
    assert_eq!(election::unfit(&stopped).as_deref(), Some("stopped on a block that does not match"));
    let faulty = Fitness { fault: Some("disk full".into()), ..fit };
    assert_eq!(election::unfit(&faulty).as_deref(), Some("disk full"));
    assert_eq!(election::behind_stream(10, Ok(10)), None);
    assert_eq!(election::behind_stream(7, Ok(10)).as_deref(), Some("catching up: 3 stream messages behind"));
    assert_eq!(election::behind_stream(7, Err("no route".into())).as_deref(), Some("cannot read the stream: no route"));
}

#[test]
fn leaderless_is_reported_only_past_the_wait() {
    assert_eq!(election::leaderless(None, ms(500)), None);
    assert_eq!(election::leaderless(Some(ms(500)), ms(500)), None);
    assert_eq!(
        election::leaderless(Some(ms(1500)), ms(500)).as_deref(),
        Some("cluster: no leader for 1.5 s (election in progress)")
    );
    assert!(election::caught_up(5, 5) && election::caught_up(6, 5) && !election::caught_up(4, 5));
}

#[test]
fn a_leaders_lease_runs_from_the_renewals_send_and_it_stops_a_look_early() {
    let t0 = Instant::now();
    let mut t = Term::new(LEASE, 8, t0);
    assert!(!t.expiring(t0 + LEASE - LOOK - ms(1)));
    assert!(t.expiring(t0 + LEASE - LOOK), "stops one look before the lease lapses");
    t.renewed(t0 + ms(250), 9);
    assert_eq!(t.revision(), 9);
    assert!(!t.expiring(t0 + LEASE), "renewed: counted from the renewal's send");
    assert!(t.expiring(t0 + ms(250) + LEASE - LOOK));
    assert_eq!(term::renew_every(LEASE), ms(250));
    assert_eq!(term::renew_timeout(LEASE), ms(500));
    // Renewals come well before the lease would lapse, and are answered before it does.
    assert!(term::renew_every(LEASE) + term::renew_timeout(LEASE) + LOOK < LEASE);
}

fn look(now: Instant, head: u64, last_seq: u64) -> Observed {
    Observed { now, building: true, fault: None, head, last_seq, store_fault: None }
}

#[test]
fn a_leader_stops_when_fenced_lost_stopped_or_expiring() {
    let t0 = Instant::now();
    let term = Term::new(LEASE, 1, t0);
    let mut l = Leading::new(LEASE, BLOCK, t0, 4, 20);
    assert!(l.on(Event::Look(look(t0 + LOOK, 4, 20)), &term).is_none());
    let fenced = l.on(Event::Refused(LedgerError::Fenced("x".into())), &term).unwrap();
    assert!(fenced.fenced() && fenced.ended() == Ended::Deposed);
    assert!(matches!(l.on(Event::LeaseLost, &term), Some(Deposed::LeaseLost)));
    assert!(matches!(l.on(Event::Stop, &term), Some(Deposed::Shutdown)));
    assert!(matches!(l.on(Event::Look(look(t0 + LEASE, 4, 20)), &term), Some(Deposed::LeaseExpired)));
    let mut lost = term.clone();
    lost.lose();
    assert!(matches!(l.on(Event::Look(look(t0 + LOOK, 4, 20)), &lost), Some(Deposed::LeaseLost)));
    let stopped = Observed { building: false, ..look(t0 + LOOK, 4, 20) };
    let why = l.on(Event::Look(stopped), &term).unwrap();
    assert!(matches!(why, Deposed::BuilderStopped(None)) && why.ended() == Ended::CouldNotProduce);
    assert_eq!(why.to_string(), "the builder stopped: it ended");
}

#[test]
fn a_leader_that_seals_nothing_while_the_stream_takes_appends_gives_way() {
    let t0 = Instant::now();
    let mut term = Term::new(LEASE, 1, t0);
    let bound = LEASE + BLOCK * 2;
    let mut l = Leading::new(LEASE, BLOCK, t0, 4, 20);
    // Keep the lease valid throughout: renewals land.
    term.renewed(t0 + bound, 2);
    // Past the bound, but the stream took nothing either: the stream is the trouble, the
    // lease decides.
    assert!(l.on(Event::Look(look(t0 + bound + ms(1), 4, 20)), &term).is_none());
    // The stream takes appends (transactions) but no block is sealed: stuck.
    let why = l.on(Event::Look(look(t0 + bound + ms(1), 4, 25)), &term).unwrap();
    assert!(matches!(&why, Deposed::NotProducing(w) if w.contains("the builder seals nothing")), "{why}");
    assert_eq!(why.ended(), Ended::CouldNotProduce);
    // A sealed block restarts the count from there.
    let mut l = Leading::new(LEASE, BLOCK, t0, 4, 20);
    assert!(l.on(Event::Look(look(t0 + ms(500), 5, 22)), &term).is_none());
    assert!(l.on(Event::Look(look(t0 + bound + ms(1), 5, 30)), &term).is_none());
    assert!(l.on(Event::Look(look(t0 + ms(500) + bound + ms(1), 5, 30)), &term).is_some());
    // A store that cannot write counts even while the stream is still.
    let mut l = Leading::new(LEASE, BLOCK, t0, 4, 20);
    let full = Observed { store_fault: Some("disk full".into()), ..look(t0 + bound + ms(1), 4, 20) };
    assert!(matches!(l.on(Event::Look(full), &term), Some(Deposed::NotProducing(w)) if w.ends_with("disk full")));
}

#[test]
fn a_takeover_writes_its_first_message_within_one_lease_or_gives_up() {
    let t0 = Instant::now();
    let term = Term::new(LEASE, 1, t0);
    let takeover = Takeover::new(t0, LEASE);
    assert!(takeover.attempt(t0 + LEASE, &term).is_ok());
    assert!(takeover.attempt(t0 + LEASE + ms(1), &term).is_err());
    let mut lost = term;
    lost.lose();
    assert!(takeover.attempt(t0, &lost).is_err(), "the lease is gone");
    assert_eq!(Takeover::first_message(Ok(12)), FirstMessage::Written);
    assert_eq!(Takeover::first_message(Err(LedgerError::Fenced("x".into()))), FirstMessage::Again);
    assert!(matches!(Takeover::first_message(Err(LedgerError::Closed)), FirstMessage::GiveUp(_)));
}

#[test]
fn an_append_landed_only_right_after_the_expected_sequence() {
    assert_eq!(fence::answered(9, Answer::Stored(10)), Ok(10));
    assert_eq!(fence::answered(9, Answer::Stored(12)), Err("the stream placed it at 12 instead of 10".into()));
    assert!(fence::answered(9, Answer::WrongLastSequence("wrong last sequence: 11".into())).is_err());
    assert_eq!(fence::answered(9, Answer::Failed("x".into())), Err("publish failed: x".into()));
    assert_eq!(fence::answered(9, Answer::TimedOut), Err("publish timed out".into()));
}

#[test]
fn an_unclear_append_is_settled_by_who_wrote_after_the_expected_sequence() {
    let ours = fence::message_id("n1", 3, 7);
    assert_eq!(ours, "n1.3.7");
    assert_eq!(fence::settle(9, &ours, Found::Message { id: ours.clone() }), Settled::Ours);
    assert_eq!(fence::settle(9, &ours, Found::Message { id: "n2.4.1".into() }), Settled::Other("n2.4.1".into()));
    assert_eq!(fence::settle(9, &ours, Found::Nothing { last: 9 }), Settled::Absent);
    assert_eq!(
        fence::settle(9, &ours, Found::Nothing { last: 11 }),
        Settled::Other("deleted; the stream ends at 11".into()),
        "a hole after the expected sequence: nobody can follow on"
    );
    assert_eq!(fence::step(9, Settled::Ours, "timed out"), Step::Landed(10));
    assert_eq!(fence::step(9, Settled::Absent, "timed out"), Step::Resend);
    match fence::step(9, Settled::Other("n2.4.1".into()), "wrong last sequence") {
        Step::Fenced(LedgerError::Fenced(why)) => {
            assert_eq!(why, "stream message 10 is another leader's (n2.4.1), not this one's (wrong last sequence)")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn records_keep_the_stream_in_block_order_and_batches_are_bounded() {
    assert_eq!(fence::about(Kind::Sealed, 7), 8, "a sealed block opens its successor");
    assert_eq!(fence::about(Kind::Term, 7), 7);
    assert!(fence::batch_has_room(0, 0));
    assert!(!fence::batch_has_room(fence::MAX_BATCH_TXS, 0));
    assert!(!fence::batch_has_room(1, fence::MAX_BATCH_BYTES));
}

#[test]
fn catching_up_applies_every_message_up_to_the_end_in_order() {
    assert_eq!(catch_up::next_to_apply(4, 6), Some(5));
    assert_eq!(catch_up::next_to_apply(6, 6), None);
    assert_eq!(catch_up::next_to_apply(0, 0), None);
    let mut r = Reading::from(5);
    assert_eq!(r.delivered(4), Delivery::Duplicate);
    assert_eq!(r.delivered(6), Delivery::Gap(5), "never skipped: read again from 5");
    assert_eq!(r.delivered(5), Delivery::Apply);
    r.applied(5);
    assert_eq!((r.next(), r.delivered(6)), (6, Delivery::Apply));
}

#[test]
fn the_same_gap_met_three_times_is_a_failure() {
    let mut g = Gaps::default();
    assert_eq!(g.met(5), GapReport::Warn);
    assert_eq!(g.met(5), GapReport::Warn);
    assert_eq!(g.met(5), GapReport::Fail(3));
    assert_eq!(g.met(9), GapReport::Warn, "another gap starts the count again");
}

#[test]
fn far_behind_is_reported_until_close_again() {
    assert_eq!(catch_up::behind(catch_up::BEHIND_DEGRADED), Behind::Degraded);
    assert_eq!(catch_up::behind(100), Behind::Unchanged);
    assert_eq!(catch_up::behind(catch_up::BEHIND_OK - 1), Behind::Clear);
}

//! A doorbell: one thread sleeps on it until a deadline, others ring it to wake that
//! thread early. A ring while the sleeper is awake is remembered until it next waits, and
//! rings in between coalesce into one, so ringing per event costs an atomic swap unless
//! the sleeper is actually asleep.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

#[derive(Default)]
pub struct Doorbell {
    rung: AtomicBool,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Doorbell {
    pub fn ring(&self) {
        if !self.rung.swap(true, Ordering::AcqRel) {
            // Under the lock, so the notification cannot fall between the sleeper's check
            // of `rung` and its wait.
            let _guard = self.lock.lock();
            self.wake.notify_one();
        }
    }

    /// Sleeps until rung or until `deadline`; whether it was rung (the ring is consumed).
    pub fn wait_until(&self, deadline: Instant) -> bool {
        if !self.rung.load(Ordering::Acquire) {
            let mut guard = self.lock.lock();
            while !self.rung.load(Ordering::Acquire) {
                if self.wake.wait_until(&mut guard, deadline).timed_out() {
                    break;
                }
            }
        }
        self.rung.swap(false, Ordering::AcqRel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_ring_wakes_the_sleeper_before_its_deadline() {
        let bell = Arc::new(Doorbell::default());
        let (asleep, waiting) = std::sync::mpsc::channel();
        let sleeper = bell.clone();
        // The sleeper reports what woke it: a ring (true) or its far deadline (false).
        let t = std::thread::spawn(move || {
            asleep.send(()).unwrap();
            sleeper.wait_until(Instant::now() + Duration::from_secs(10))
        });
        waiting.recv().unwrap();
        bell.ring();
        assert!(t.join().unwrap(), "woken by the ring, not by its deadline");
    }

    #[test]
    fn rings_while_awake_are_kept_once_and_a_quiet_bell_times_out() {
        let bell = Doorbell::default();
        bell.ring();
        bell.ring();
        assert!(bell.wait_until(Instant::now() + Duration::from_secs(30)), "the earlier ring is kept");
        let started = Instant::now();
        assert!(!bell.wait_until(started + Duration::from_millis(30)), "two rings coalesced into one");
        assert!(started.elapsed() >= Duration::from_millis(30));
    }
}

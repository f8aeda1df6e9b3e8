//! `--compute-units-per-second`: a token bucket over the compute units each request costs
//! at the provider. A batch larger than the bucket runs into debt and the next requests
//! wait it off, so one large prefetch is not refused outright.

use std::time::{Duration, Instant};

use parking_lot::Mutex;

pub struct RateLimit {
    per_second: f64,
    state: Mutex<(f64, Instant)>,
}

impl RateLimit {
    pub fn new(per_second: u64) -> Self {
        let per_second = per_second.max(1) as f64;
        Self { per_second, state: Mutex::new((per_second, Instant::now())) }
    }

    /// Takes `units`, sleeping until the bucket holds them.
    pub fn take(&self, units: u64) {
        let wait = {
            let mut state = self.state.lock();
            let now = Instant::now();
            let refilled = state.0 + now.duration_since(state.1).as_secs_f64() * self.per_second;
            state.0 = refilled.min(self.per_second) - units as f64;
            state.1 = now;
            (-state.0).max(0.0) / self.per_second
        };
        if wait > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(wait));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_does_not_wait_and_debt_is_waited_off() {
        let limit = RateLimit::new(1000);
        let start = Instant::now();
        limit.take(500);
        assert!(start.elapsed() < Duration::from_millis(50));
        limit.take(700); // 200 units of debt: 0.2 s
        assert!(start.elapsed() >= Duration::from_millis(150), "{:?}", start.elapsed());
    }
}

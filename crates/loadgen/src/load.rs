//! Closed-loop load: one thread per connection, blocking write/read, optional pipelining
//! and pacing. Samples are per request, from the write of its bytes to the end of its response.

use crate::http::{is_success, Target};
use crate::stats::{json_string, Samples};
use std::collections::VecDeque;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub struct Config {
    pub target: Target,
    pub requests: Vec<Vec<u8>>,
    pub connections: usize,
    pub duration: Duration,
    pub warmup: Duration,
    pub pipeline: usize,
    pub rate: Option<f64>,
    pub once: bool,
    pub timestamps: bool,
}

#[derive(Default)]
struct Tally {
    measured: u64, // responses to requests sent inside the measured window
    ok: u64,       // successes in the whole run
    errors: u64,   // failures in the whole run (HTTP status, JSON-RPC error, I/O)
    bytes_in: u64,
    last_done: Option<Instant>,
    error_sample: Option<String>,
    stamps: Vec<(usize, Instant, Instant, bool)>,
}

impl Tally {
    fn error(&mut self, what: impl FnOnce() -> String) {
        self.errors += 1;
        if self.error_sample.is_none() {
            self.error_sample = Some(what());
        }
    }
}

struct Clock {
    t0: Instant,
    unix0_us: u128,
}

impl Clock {
    fn unix_us(&self, t: Instant) -> u128 {
        self.unix0_us + t.duration_since(self.t0).as_micros()
    }
}

fn worker(cfg: &Config, c: usize, t0: Instant, measure_from: Instant, stop_at: Instant) -> (Samples, Tally) {
    let mut samples = Samples::new();
    let mut tally = Tally::default();
    let n = cfg.requests.len();
    // Paced: the connections take turns, so request j overall is due at t0 + j / rate.
    let due = |sent: u64| {
        cfg.rate.map(|r| t0 + Duration::from_secs_f64((sent as f64 * cfg.connections as f64 + c as f64) / r))
    };
    let mut conn = match cfg.target.connect() {
        Ok(conn) => conn,
        Err(e) => {
            tally.error(|| format!("connect: {e}"));
            return (samples, tally);
        }
    };
    let mut next = c; // index of the next body, before wrapping
    let mut sent: u64 = 0;
    let mut inflight: VecDeque<(usize, Instant)> = VecDeque::with_capacity(cfg.pipeline);
    loop {
        while inflight.len() < cfg.pipeline && !(cfg.once && next >= n) {
            let mut now = Instant::now();
            if now >= stop_at {
                break;
            }
            if let Some(due) = due(sent) {
                if due > now {
                    if !inflight.is_empty() {
                        break; // collect a response while waiting
                    }
                    thread::sleep(due - now);
                    now = Instant::now();
                }
            }
            let idx = next % n;
            if let Err(e) = conn.send(&cfg.requests[idx]) {
                tally.error(|| format!("write: {e}"));
                break;
            }
            inflight.push_back((idx, now));
            next += cfg.connections;
            sent += 1;
        }
        let Some(&(idx, at)) = inflight.front() else { break };
        match conn.recv() {
            Ok(resp) => {
                let done = Instant::now();
                inflight.pop_front();
                let body = conn.body(&resp);
                let ok = is_success(resp.status, body);
                tally.bytes_in += body.len() as u64;
                if ok {
                    tally.ok += 1;
                } else {
                    tally.error(|| {
                        format!("HTTP {}: {}", resp.status, String::from_utf8_lossy(&body[..body.len().min(400)]))
                    });
                }
                if at >= measure_from && at < stop_at {
                    tally.measured += 1;
                    samples.push(done.duration_since(at).as_micros() as u64);
                    tally.last_done = Some(done);
                }
                if cfg.timestamps {
                    tally.stamps.push((idx, at, done, ok));
                }
            }
            Err(e) => {
                // Everything in flight on this connection is lost; start a new one.
                for (i, a) in inflight.drain(..) {
                    tally.error(|| format!("read: {e}"));
                    if cfg.timestamps {
                        tally.stamps.push((i, a, Instant::now(), false));
                    }
                }
                thread::sleep(Duration::from_millis(10));
                match cfg.target.connect() {
                    Ok(c2) => conn = c2,
                    Err(e) => {
                        tally.error(|| format!("reconnect: {e}"));
                        break;
                    }
                }
                if Instant::now() >= stop_at {
                    break;
                }
            }
        }
    }
    (samples, tally)
}

pub fn run(cfg: Config) -> String {
    let cfg = Arc::new(cfg);
    let unix0_us = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros();
    let t0 = Instant::now();
    let clock = Clock { t0, unix0_us };
    let measure_from = if cfg.once { t0 } else { t0 + cfg.warmup };
    let stop_at = measure_from + cfg.duration;
    let cpu0 = crate::stats::cpu_seconds();
    let handles: Vec<_> = (0..cfg.connections)
        .map(|c| {
            let cfg = Arc::clone(&cfg);
            thread::spawn(move || worker(&cfg, c, t0, measure_from, stop_at))
        })
        .collect();
    let mut parts = Vec::new();
    let mut total = Tally::default();
    for h in handles {
        let (s, t) = h.join().expect("worker panicked");
        parts.push(s);
        total.measured += t.measured;
        total.ok += t.ok;
        total.errors += t.errors;
        total.bytes_in += t.bytes_in;
        total.last_done = total.last_done.max(t.last_done);
        if total.error_sample.is_none() {
            total.error_sample = t.error_sample;
        }
        total.stamps.extend(t.stamps);
    }
    let cpu_s = crate::stats::cpu_seconds() - cpu0;
    let samples = Samples::merge(parts);
    // Closed loop for a fixed time: the window is the duration. --once: until the last answer.
    let window = if cfg.once {
        total.last_done.map_or(0.0, |d| d.duration_since(measure_from).as_secs_f64())
    } else {
        cfg.duration.as_secs_f64()
    };
    let rps = if window > 0.0 { total.measured as f64 / window } else { 0.0 };
    let mut out = format!(
        "{{\"mode\":\"run\",\"connections\":{},\"pipeline\":{},\"window_s\":{:.3},\"requests\":{},\"ok\":{},\"errors\":{},\"rps\":{:.1},\"latency_us\":{},\"bytes_in\":{},\"cpu_s\":{:.2},\"wall_s\":{:.3},\"error_sample\":{}",
        cfg.connections,
        cfg.pipeline,
        window,
        total.measured,
        total.ok,
        total.errors,
        rps,
        samples.json(),
        total.bytes_in,
        cpu_s,
        t0.elapsed().as_secs_f64(),
        total.error_sample.as_deref().map_or("null".to_string(), json_string),
    );
    if cfg.timestamps {
        total.stamps.sort_by_key(|s| s.0);
        let rows: Vec<String> = total
            .stamps
            .iter()
            .map(|(i, a, d, ok)| format!("[{},{},{},{}]", i, clock.unix_us(*a), clock.unix_us(*d), u8::from(*ok)))
            .collect();
        out.push_str(&format!(",\"timestamps\":[{}]", rows.join(",")));
    }
    out.push('}');
    out
}

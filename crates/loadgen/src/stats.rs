//! Latency samples (microseconds) kept in full and sorted once at the end: exact
//! percentiles, and at a few million samples at most the memory is small.

pub struct Samples(pub Vec<u32>);

impl Samples {
    pub fn new() -> Samples {
        Samples(Vec::with_capacity(1 << 16))
    }

    pub fn push(&mut self, us: u64) {
        self.0.push(us.min(u32::MAX as u64) as u32);
    }

    pub fn merge(parts: Vec<Samples>) -> Samples {
        let mut all = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
        for p in parts {
            all.extend_from_slice(&p.0);
        }
        all.sort_unstable();
        Samples(all)
    }

    /// Percentile (0..=100) of already-sorted samples, nearest-rank.
    pub fn pct(&self, p: f64) -> u32 {
        if self.0.is_empty() {
            return 0;
        }
        let rank = ((p / 100.0) * self.0.len() as f64).ceil() as usize;
        self.0[rank.clamp(1, self.0.len()) - 1]
    }

    pub fn json(&self) -> String {
        let mean =
            if self.0.is_empty() { 0.0 } else { self.0.iter().map(|&v| v as f64).sum::<f64>() / self.0.len() as f64 };
        format!(
            "{{\"count\":{},\"mean\":{:.1},\"p50\":{},\"p90\":{},\"p99\":{},\"p999\":{},\"max\":{}}}",
            self.0.len(),
            mean,
            self.pct(50.0),
            self.pct(90.0),
            self.pct(99.0),
            self.pct(99.9),
            self.0.last().copied().unwrap_or(0)
        )
    }
}

/// CPU seconds (user + system) this process has used, from /proc/self/stat.
pub fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the ")" that closes the command name: utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0 // USER_HZ is 100 on Linux
}

pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

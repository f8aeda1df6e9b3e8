//! Command-line flags: `--name value` pairs and bare `--switch`es, nothing more.

use std::collections::HashMap;
use std::str::FromStr;

pub struct Args {
    pub mode: String,
    values: HashMap<String, String>,
}

const SWITCHES: &[&str] = &["once", "timestamps", "help"];

impl Args {
    pub fn parse() -> Result<Args, String> {
        let mut it = std::env::args().skip(1).peekable();
        let mode = match it.peek() {
            Some(m) if !m.starts_with("--") => it.next().unwrap(),
            _ => "run".to_string(),
        };
        let mut values = HashMap::new();
        while let Some(flag) = it.next() {
            let name = flag.strip_prefix("--").ok_or_else(|| format!("unexpected argument {flag}"))?.to_string();
            if SWITCHES.contains(&name.as_str()) {
                values.insert(name, "true".to_string());
            } else {
                let v = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
                values.insert(name, v);
            }
        }
        Ok(Args { mode, values })
    }

    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    pub fn str(&self, name: &str) -> Result<String, String> {
        self.values.get(name).cloned().ok_or_else(|| format!("--{name} is required"))
    }

    pub fn get<T: FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.values.get(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| format!("--{name}: cannot parse {v:?}")),
        }
    }
}

pub const USAGE: &str = "\
loadgen [run] --url http://HOST:PORT[/PATH] --bodies FILE [flags]
  Closed-loop load: each connection is a thread doing blocking write/read of pre-built
  HTTP/1.1 POST requests with keep-alive. FILE holds one request body per line; connection
  c sends bodies c, c+N, c+2N, ... cyclically.
  --connections N   connections/threads (default 8)
  --duration S      measured seconds (default 5)
  --warmup S        seconds of load before measuring (default 1)
  --pipeline D      requests in flight per connection (default 1)
  --rate R          cap on total requests per second, paced per connection (default none)
  --once            send every body exactly once, then stop (--duration is then a time limit)
  --timestamps      with --once: report [sent_us, done_us, ok] per body (unix microseconds)

loadgen watch --url URL --bodies FILE --duration S [--interval-ms MS] [--fields a,b]
  One connection polls the first body every MS (default 2) and reports each poll at
  which any of the named JSON string fields (default number,preconfIndex) changed.

Output: one JSON object on stdout.";

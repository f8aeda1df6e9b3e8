//! loadgen: a small, fast HTTP/1.1 keep-alive load generator for the JSON-RPC benchmarks
//! (benches/). Standard library only. See `loadgen --help`.

mod args;
mod http;
mod load;
mod stats;
mod watch;

use std::time::Duration;

fn bodies(path: &str) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let lines: Vec<String> = text.lines().filter(|l| !l.trim().is_empty()).map(str::to_string).collect();
    if lines.is_empty() {
        return Err(format!("{path}: no request bodies"));
    }
    Ok(lines)
}

fn secs(v: f64) -> Duration {
    Duration::from_secs_f64(v.max(0.0))
}

fn main_result() -> Result<String, String> {
    let a = args::Args::parse()?;
    if a.has("help") {
        return Ok(args::USAGE.to_string());
    }
    let target = http::Target::parse(&a.str("url")?)?;
    let bodies = bodies(&a.str("bodies")?)?;
    match a.mode.as_str() {
        "run" => {
            let connections: usize = a.get("connections", 8)?;
            let pipeline: usize = a.get("pipeline", 1)?;
            if connections == 0 || pipeline == 0 {
                return Err("--connections and --pipeline must be at least 1".into());
            }
            let rate: f64 = a.get("rate", 0.0)?;
            let requests = bodies.iter().map(|b| target.request(b)).collect();
            Ok(load::run(load::Config {
                target,
                requests,
                connections,
                duration: secs(a.get("duration", 5.0)?),
                warmup: secs(a.get("warmup", 1.0)?),
                pipeline,
                rate: (rate > 0.0).then_some(rate),
                once: a.has("once"),
                timestamps: a.has("timestamps"),
            }))
        }
        "watch" => {
            let fields: Vec<String> =
                a.get("fields", "number,preconfIndex".to_string())?.split(',').map(str::to_string).collect();
            let interval: f64 = a.get("interval-ms", 2.0)?;
            Ok(watch::run(&target, &bodies[0], &fields, secs(a.get("duration", 5.0)?), secs(interval / 1000.0)))
        }
        m => Err(format!("unknown mode {m}")),
    }
}

fn main() {
    match main_result() {
        Ok(out) => println!("{out}"),
        Err(e) => {
            eprintln!("loadgen: {e}\n\n{}", args::USAGE);
            std::process::exit(2);
        }
    }
}

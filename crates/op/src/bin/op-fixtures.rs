//! Executes every witness fixture (`block-*.json`, gzipped or not) of a folder and prints
//! one line per block, then `N passed, M failed`; exits 1 when any failed, 2 on bad usage.
//! `npm run op-fixtures -- [DIR]` runs it; more blocks in the same format need no code.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use preconf_op::fixture::{block_files, WitnessFixture};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir] = args.as_slice() else {
        eprintln!("usage: op-fixtures DIR   (a folder of block-*.json witness fixtures)");
        return ExitCode::from(2);
    };
    let dir = PathBuf::from(dir);
    let files = match block_files(&dir) {
        Ok(files) if !files.is_empty() => files,
        Ok(_) => {
            eprintln!("no block-*.json in {}", dir.display());
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("cannot read {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut failed) = (0, 0);
    for path in &files {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let started = Instant::now();
        let outcome = WitnessFixture::load(path).and_then(|f| {
            let block = f.execute()?;
            Ok((f.expected_hash, block))
        });
        let ms = started.elapsed().as_secs_f64() * 1e3;
        match outcome {
            Ok((want, block)) if block.header.hash_slow() == want => {
                passed += 1;
                println!(
                    "ok    {name}: block {} ({} txs, gas {}) hash {want} ({ms:.1} ms)",
                    block.header.number,
                    block.txs.len(),
                    block.header.gas_used
                );
            }
            Ok((want, block)) => {
                failed += 1;
                println!("FAIL  {name}: block {} hash {} want {want}", block.header.number, block.header.hash_slow());
            }
            Err(e) => {
                failed += 1;
                println!("FAIL  {name}: {e}");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

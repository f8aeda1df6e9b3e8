use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Duration;

use super::*;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("journal-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn record(i: u32, len: usize) -> (B256, Bytes) {
    let mut raw = vec![(i % 251) as u8; len];
    raw[..4].copy_from_slice(&i.to_be_bytes());
    (B256::left_padding_from(&i.to_be_bytes()), Bytes::from(raw))
}

/// What a reopened journal holds, by record, with how often each appears.
fn reopened(dir: &Path) -> HashMap<Bytes, usize> {
    let (_, records) = Journal::open(dir).unwrap();
    let mut counts = HashMap::new();
    for r in records {
        *counts.entry(r).or_insert(0) += 1;
    }
    counts
}

#[test]
fn records_survive_reopen_and_forget_compacts() {
    let dir = temp_dir("reopen");
    let a = Bytes::from(vec![1u8; 10]);
    let b = Bytes::from(vec![2u8; 20]);
    {
        let (j, recs) = Journal::open(&dir).unwrap();
        assert!(recs.is_empty());
        j.append(B256::repeat_byte(1), &a).unwrap();
        j.append(B256::repeat_byte(2), &b).unwrap();
    }
    let (j, recs) = Journal::open(&dir).unwrap();
    assert_eq!(recs, vec![a.clone(), b.clone()]);
    // Re-register what was replayed, forget one, rewrite.
    j.register(B256::repeat_byte(1), a.clone());
    j.register(B256::repeat_byte(2), b.clone());
    j.forget([B256::repeat_byte(1)].iter());
    j.compact().unwrap();
    drop(j);
    let (_, recs) = Journal::open(&dir).unwrap();
    assert_eq!(recs, vec![b]);
    // A torn tail is ignored.
    let mut f = OpenOptions::new().append(true).open(dir.join("pool.journal")).unwrap();
    f.write_all(&[0, 0, 0, 50, 1, 2, 3]).unwrap();
    drop(f);
    let (_, recs) = Journal::open(&dir).unwrap();
    assert_eq!(recs.len(), 1);
    fs::remove_dir_all(&dir).unwrap();
}

/// The compaction writes the new file without the lock: appends (durable or buffered) and
/// forgets go on meanwhile, and what they did is in the file that takes the old one's place.
#[test]
fn appends_go_on_while_the_compaction_writes() {
    let dir = temp_dir("concurrent");
    let (j, _) = Journal::open(&dir).unwrap();
    let j = Arc::new(j);
    let kept: Vec<_> = (0..50).map(|i| record(i, 300)).collect();
    let gone: Vec<_> = (50..2_000).map(|i| record(i, 1_000)).collect();
    for (h, r) in kept.iter().chain(&gone) {
        j.append_buffered(*h, r).unwrap();
    }
    j.flush().unwrap();

    // The compaction stops once its copy of the live set is on disk; meanwhile another thread
    // appends (one durable, one buffered) and forgets a kept record.
    let (paused, resume) = (mpsc::channel::<()>(), mpsc::channel::<()>());
    let (paused_tx, resume_rx) = (paused.0, resume.1);
    *j.inner.pause_compaction.lock() = Some(Box::new(move || {
        paused_tx.send(()).unwrap();
        resume_rx.recv().unwrap();
    }));
    let sealer = j.clone();
    std::thread::spawn(move || sealer.forget(gone.iter().map(|(h, _)| h)));
    paused.1.recv_timeout(Duration::from_secs(10)).expect("compaction started");

    let (durable, buffered) = (record(5_000, 200), record(5_001, 200));
    let (done_tx, done_rx) = mpsc::channel();
    let writer = j.clone();
    let (d, b, forgotten) = (durable.clone(), buffered.clone(), kept[0].0);
    std::thread::spawn(move || {
        writer.append(d.0, &d.1).unwrap();
        writer.append_buffered(b.0, &b.1).unwrap();
        writer.forget([forgotten].iter());
        done_tx.send(()).unwrap();
    });
    done_rx.recv_timeout(Duration::from_secs(10)).expect("appends while the compaction writes");
    resume.0.send(()).unwrap();
    // The swap takes the buffered record along and makes it durable.
    j.flush().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while {
        let st = j.inner.state.lock();
        st.compacting || st.file_bytes > 1 << 20
    } {
        assert!(std::time::Instant::now() < deadline, "compaction finished");
        std::thread::yield_now();
    }
    drop(j);

    let held = reopened(&dir);
    for (_, r) in kept.iter().skip(1) {
        assert_eq!(held.get(r), Some(&1), "a live record kept once");
    }
    assert_eq!(held.get(&durable.1), Some(&1));
    assert_eq!(held.get(&buffered.1), Some(&1));
    // Forgotten after the live set was copied: still there, dropped at replay.
    assert_eq!(held.get(&kept[0].1), Some(&1));
    assert_eq!(held.len(), 52);
    fs::remove_dir_all(&dir).unwrap();
}

/// Many writers and repeated compactions: every record appended durably is in the file
/// exactly once unless forgotten before a compaction copied the live set.
#[test]
fn compactions_under_concurrent_appends_lose_nothing() {
    let dir = temp_dir("stress");
    let (j, _) = Journal::open(&dir).unwrap();
    let j = Arc::new(j);
    let writers: Vec<_> = (0..4u32)
        .map(|w| {
            let j = j.clone();
            std::thread::spawn(move || {
                let mut live = Vec::new();
                for i in 0..1_500u32 {
                    let (h, r) = record(w * 10_000 + i, 2_000);
                    if i % 3 == 0 {
                        j.append(h, &r).unwrap();
                    } else {
                        j.append_buffered(h, &r).unwrap();
                    }
                    // Keep every tenth; forget the rest a little later (as blocks seal).
                    if i % 10 == 0 {
                        live.push(r);
                    }
                    if i >= 5 && (i - 5) % 10 != 0 {
                        let (old, _) = record(w * 10_000 + i - 5, 2_000);
                        j.forget([old].iter());
                    }
                }
                live
            })
        })
        .collect();
    let writing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let compactor = {
        let (j, writing) = (j.clone(), writing.clone());
        std::thread::spawn(move || {
            let mut compactions = 0;
            while writing.load(std::sync::atomic::Ordering::Relaxed) {
                j.compact().unwrap();
                compactions += 1;
            }
            compactions
        })
    };
    let live: Vec<Bytes> = writers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    writing.store(false, std::sync::atomic::Ordering::Relaxed);
    assert!(compactor.join().unwrap() > 10, "compactions ran while the writers did");
    j.flush().unwrap();
    j.compact().unwrap();
    drop(j);

    let held = reopened(&dir);
    for r in &live {
        assert_eq!(held.get(r), Some(&1), "a live record kept once");
    }
    // The last compaction ran with every writer done: only the live set and the last five
    // records each writer appended but never forgot remain.
    assert_eq!(held.len(), live.len() + 4 * 5);
    fs::remove_dir_all(&dir).unwrap();
}

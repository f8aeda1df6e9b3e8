//! The pool journal: every accepted transaction is on disk before its hash is returned,
//! so a crash (even kill -9) loses nothing that was accepted.
//!
//! An append-only file of `[u32 big-endian length][EIP-2718 bytes]` records. Appends are
//! group-committed: concurrent submitters share one `fdatasync`. The journal remembers
//! which records are still live (pooled, or pre-confirmed but not sealed); sealing a block
//! forgets the included ones, and a background thread rewrites the file from the live set
//! when it has grown to more than twice that size (never the builder's thread). On start
//! every record is replayed through normal validation, so included or invalid ones are
//! dropped then.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use alloy_primitives::{map::B256Map, Bytes, B256};
use parking_lot::{Condvar, Mutex};

/// A write that failed: every later append fails with it (the file's tail is unknown).
#[derive(Clone, Debug, thiserror::Error)]
#[error("pool journal write failed: {0}")]
struct WriteFailed(Arc<io::Error>);

struct State {
    file: File,
    /// Encoded records waiting for the next sync.
    buffer: Vec<u8>,
    /// Records appended / made durable, counted.
    appended: u64,
    durable: u64,
    syncing: bool,
    failed: Option<WriteFailed>,
    live: B256Map<Bytes>,
    live_bytes: u64,
    file_bytes: u64,
    /// The compaction thread should look at the file (or stop).
    compact_wanted: bool,
    stopping: bool,
}

struct Inner {
    path: PathBuf,
    state: Mutex<State>,
    synced: Condvar,
    /// Wakes the compaction thread.
    wake: Condvar,
}

pub struct Journal {
    inner: Arc<Inner>,
    compactor: Option<JoinHandle<()>>,
}

const COMPACT_SLACK: u64 = 1 << 20;

impl Journal {
    /// Opens the journal in `dir` and returns the records it holds (oldest first).
    pub fn open(dir: &Path) -> io::Result<(Self, Vec<Bytes>)> {
        let path = dir.join("pool.journal");
        let records = read_records(&path)?;
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        let file_bytes = file.metadata()?.len();
        let inner = Arc::new(Inner {
            path,
            state: Mutex::new(State {
                file,
                buffer: Vec::new(),
                appended: 0,
                durable: 0,
                syncing: false,
                failed: None,
                live: Default::default(),
                live_bytes: 0,
                file_bytes,
                compact_wanted: false,
                stopping: false,
            }),
            synced: Condvar::new(),
            wake: Condvar::new(),
        });
        let worker = inner.clone();
        let compactor =
            std::thread::Builder::new().name("preconf-journal".into()).spawn(move || worker.compact_when_asked())?;
        Ok((Self { inner, compactor: Some(compactor) }, records))
    }

    /// Appends a record and returns once it is durable (shared fdatasync with concurrent
    /// appends).
    pub fn append(&self, hash: B256, raw: &Bytes) -> io::Result<()> {
        let mine = self.inner.buffer(hash, raw)?;
        self.inner.sync_upto(mine)
    }

    /// Appends a record without waiting for the disk: it is written with the next `append`
    /// or `flush`. For a clustered node, whose transactions the replicated log already holds;
    /// the journal only spares a restart from reading them back.
    pub fn append_buffered(&self, hash: B256, raw: &Bytes) -> io::Result<()> {
        self.inner.buffer(hash, raw).map(|_| ())
    }

    /// Makes every record appended so far durable.
    pub fn flush(&self) -> io::Result<()> {
        let upto = self.inner.state.lock().appended;
        self.inner.sync_upto(upto)
    }

    /// Marks records as no longer needed (included in a sealed block, or dropped); the
    /// compaction thread rewrites the file once it has grown well past the live set.
    pub fn forget<'a>(&self, hashes: impl IntoIterator<Item = &'a B256>) {
        let mut st = self.inner.state.lock();
        for h in hashes {
            if let Some(raw) = st.live.remove(h) {
                st.live_bytes -= 4 + raw.len() as u64;
            }
        }
        if st.file_bytes > 2 * st.live_bytes + COMPACT_SLACK && !st.compact_wanted {
            st.compact_wanted = true;
            self.inner.wake.notify_one();
        }
    }

    /// Registers a record replayed at start as live, without writing it again.
    pub fn register(&self, hash: B256, raw: Bytes) {
        let mut st = self.inner.state.lock();
        let len = 4 + raw.len() as u64;
        if st.live.insert(hash, raw).is_none() {
            st.live_bytes += len;
        }
    }

    /// Rewrites the file from the live set now (after replay at start).
    pub fn compact(&self) -> io::Result<()> {
        let mut st = self.inner.state.lock();
        self.inner.rewrite(&mut st)
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        self.inner.state.lock().stopping = true;
        self.inner.wake.notify_one();
        if let Some(t) = self.compactor.take() {
            let _ = t.join();
        }
    }
}

impl Inner {
    fn compact_when_asked(&self) {
        let mut st = self.state.lock();
        loop {
            while !st.compact_wanted && !st.stopping {
                self.wake.wait(&mut st);
            }
            if st.stopping {
                return;
            }
            st.compact_wanted = false;
            // A group commit in flight owns the file; wait for it to finish.
            while st.syncing {
                self.synced.wait(&mut st);
            }
            if st.file_bytes > 2 * st.live_bytes + COMPACT_SLACK {
                if let Err(e) = self.rewrite(&mut st) {
                    crate::log::warn(
                        "pool",
                        "pool journal compaction failed",
                        serde_json::json!({ "error": e.to_string() }),
                    );
                }
            }
        }
    }

    /// Buffers a record; returns its number (durable once `durable` reaches it).
    fn buffer(&self, hash: B256, raw: &Bytes) -> io::Result<u64> {
        let mut st = self.state.lock();
        if let Some(e) = &st.failed {
            return Err(io::Error::other(e.clone()));
        }
        st.buffer.extend_from_slice(&(raw.len() as u32).to_be_bytes());
        st.buffer.extend_from_slice(raw);
        st.appended += 1;
        if st.live.insert(hash, raw.clone()).is_none() {
            st.live_bytes += 4 + raw.len() as u64;
        }
        Ok(st.appended)
    }

    /// Returns once records up to `mine` are durable, leading a group commit if none runs.
    fn sync_upto(&self, mine: u64) -> io::Result<()> {
        let mut st = self.state.lock();
        loop {
            if st.durable >= mine {
                return Ok(());
            }
            if let Some(e) = &st.failed {
                return Err(io::Error::other(e.clone()));
            }
            if st.syncing {
                self.synced.wait(&mut st);
                continue;
            }
            // Lead one group commit: everything buffered so far.
            st.syncing = true;
            let batch = std::mem::take(&mut st.buffer);
            let upto = st.appended;
            let mut file = st.file.try_clone()?;
            drop(st);
            let result = file.write_all(&batch).and_then(|_| file.sync_data());
            st = self.state.lock();
            st.syncing = false;
            match result {
                Ok(()) => {
                    st.durable = upto;
                    st.file_bytes += batch.len() as u64;
                }
                Err(e) => st.failed = Some(WriteFailed(Arc::new(e))),
            }
            self.synced.notify_all();
        }
    }

    /// Rewrites the file with the live records only (atomic rename).
    fn rewrite(&self, st: &mut State) -> io::Result<()> {
        let tmp = self.path.with_extension("journal.tmp");
        let mut out = Vec::with_capacity(st.live_bytes as usize + st.buffer.len());
        for raw in st.live.values() {
            out.extend_from_slice(&(raw.len() as u32).to_be_bytes());
            out.extend_from_slice(raw);
        }
        {
            let mut f = File::create(&tmp)?;
            f.write_all(&out)?;
            f.sync_all()?;
        }
        fs::rename(&tmp, &self.path)?;
        if let Some(dir) = self.path.parent() {
            File::open(dir)?.sync_all()?;
        }
        st.file = OpenOptions::new().append(true).open(&self.path)?;
        st.file_bytes = out.len() as u64;
        // Records buffered but not yet synced are in the live set and were just written.
        st.buffer.clear();
        st.durable = st.appended;
        Ok(())
    }
}

/// Reads every complete record; a torn record at the end (crash mid-write) is ignored.
fn read_records(path: &Path) -> io::Result<Vec<Bytes>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut reader = BufReader::new(file);
    let mut records = Vec::new();
    loop {
        let mut len = [0u8; 4];
        if reader.read_exact(&mut len).is_err() {
            break;
        }
        let len = u32::from_be_bytes(len) as usize;
        if len > 1 << 20 {
            break;
        }
        let mut raw = vec![0u8; len];
        if reader.read_exact(&mut raw).is_err() {
            break;
        }
        records.push(Bytes::from(raw));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_reopen_and_forget_compacts() {
        let dir = std::env::temp_dir().join(format!("journal-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
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
        // Re-register what was replayed, forget one, force a rewrite.
        j.append(B256::repeat_byte(2), &b).unwrap();
        {
            let mut st = j.inner.state.lock();
            st.live.remove(&B256::repeat_byte(1));
            j.inner.rewrite(&mut st).unwrap();
        }
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
}

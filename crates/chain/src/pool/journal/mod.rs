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
//!
//! No disk I/O happens under the state lock: a submission only ever waits for the lock to
//! buffer its record, and for a write when it wants its record durable. The file is
//! written by one writer at a time (a group commit, or the compaction's final swap), which
//! takes it with everything buffered so far.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use alloy_primitives::{map::B256Map, Bytes, B256};
use parking_lot::{Condvar, Mutex, MutexGuard};

#[cfg(test)]
mod tests;

/// A write that failed: every later append fails with it (the file's tail is unknown).
#[derive(Clone, Debug, thiserror::Error)]
#[error("pool journal write failed: {0}")]
struct WriteFailed(Arc<io::Error>);

struct State {
    file: Arc<File>,
    /// Encoded records waiting for the next write.
    buffer: Vec<u8>,
    /// Records appended / made durable, counted.
    appended: u64,
    durable: u64,
    /// A writer holds the file (a group commit or the compaction's swap).
    writing: bool,
    compacting: bool,
    failed: Option<WriteFailed>,
    live: B256Map<Bytes>,
    live_bytes: u64,
    /// Bytes durable in `file`, every one a whole record.
    file_bytes: u64,
    /// The compaction thread should look at the file (or stop).
    compact_wanted: bool,
    stopping: bool,
}

impl State {
    fn check(&self) -> io::Result<()> {
        match &self.failed {
            Some(e) => Err(io::Error::other(e.clone())),
            None => Ok(()),
        }
    }

    fn oversized(&self) -> bool {
        self.file_bytes > 2 * self.live_bytes + COMPACT_SLACK
    }
}

/// What one writer took: the records buffered up to `upto`, encoded.
struct Batch {
    bytes: Vec<u8>,
    upto: u64,
}

struct Inner {
    path: PathBuf,
    state: Mutex<State>,
    /// Wakes whoever waits for the file (writers) or for durability (appenders).
    written: Condvar,
    /// Wakes the compaction thread.
    wake: Condvar,
    #[cfg(test)]
    pause_compaction: Mutex<Option<Box<dyn FnOnce() + Send>>>,
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
        let file = OpenOptions::new().create(true).read(true).append(true).open(&path)?;
        let file_bytes = file.metadata()?.len();
        let inner = Arc::new(Inner {
            path,
            state: Mutex::new(State {
                file: Arc::new(file),
                buffer: Vec::new(),
                appended: 0,
                durable: 0,
                writing: false,
                compacting: false,
                failed: None,
                live: Default::default(),
                live_bytes: 0,
                file_bytes,
                compact_wanted: false,
                stopping: false,
            }),
            written: Condvar::new(),
            wake: Condvar::new(),
            #[cfg(test)]
            pause_compaction: Mutex::new(None),
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
        if st.oversized() && !st.compact_wanted {
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
        self.inner.compact()
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
            if !st.oversized() {
                continue;
            }
            let result = MutexGuard::unlocked(&mut st, || self.compact());
            if let Err(e) = result {
                crate::log::warn(
                    "pool",
                    "pool journal compaction failed",
                    serde_json::json!({ "error": e.to_string() }),
                );
            }
        }
    }

    /// Buffers a record; returns its number (durable once `durable` reaches it).
    fn buffer(&self, hash: B256, raw: &Bytes) -> io::Result<u64> {
        let mut st = self.state.lock();
        st.check()?;
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
            st.check()?;
            if st.writing {
                self.written.wait(&mut st);
                continue;
            }
            self.group_commit(&mut st)?;
        }
    }

    /// Takes the file (once no one else writes it) with everything buffered so far.
    fn take_file(&self, st: &mut MutexGuard<'_, State>) -> (Batch, Arc<File>) {
        while st.writing {
            self.written.wait(st);
        }
        st.writing = true;
        let batch = Batch { bytes: std::mem::take(&mut st.buffer), upto: st.appended };
        (batch, st.file.clone())
    }

    /// Writes and syncs what is buffered, with the lock released meanwhile.
    fn group_commit(&self, st: &mut MutexGuard<'_, State>) -> io::Result<()> {
        let (batch, file) = self.take_file(st);
        let result = MutexGuard::unlocked(st, || (&*file).write_all(&batch.bytes).and_then(|_| file.sync_data()));
        st.writing = false;
        self.written.notify_all();
        match result {
            Ok(()) => {
                st.durable = batch.upto;
                st.file_bytes += batch.bytes.len() as u64;
                Ok(())
            }
            Err(e) => {
                let failed = WriteFailed(Arc::new(e));
                st.failed = Some(failed.clone());
                Err(io::Error::other(failed))
            }
        }
    }

    /// Rewrites the file with the live records only. Appends go on meanwhile: the live set
    /// is copied together with a group commit, so it holds exactly the live records the file
    /// has up to `from`; what the file gains after `from`, and what is buffered when the new
    /// file takes its place, is copied into it before the rename.
    fn compact(&self) -> io::Result<()> {
        let mut st = self.state.lock();
        while st.compacting {
            self.written.wait(&mut st);
        }
        st.check()?;
        st.compacting = true;
        let live: Vec<Bytes> = st.live.values().cloned().collect();
        let result = self.group_commit(&mut st).and_then(|_| {
            let from = st.file_bytes;
            MutexGuard::unlocked(&mut st, || self.write_live(&live)).map(|out| (from, out))
        });
        let result = result.and_then(|(from, (tmp, out))| self.swap(&mut st, from, &tmp, out));
        st.compacting = false;
        self.written.notify_all();
        result
    }

    /// The live records, into a temporary file beside the journal, synced.
    fn write_live(&self, live: &[Bytes]) -> io::Result<(PathBuf, File)> {
        let tmp = self.path.with_extension("journal.tmp");
        let mut bytes = Vec::with_capacity(live.iter().map(|r| 4 + r.len()).sum());
        for raw in live {
            bytes.extend_from_slice(&(raw.len() as u32).to_be_bytes());
            bytes.extend_from_slice(raw);
        }
        let mut out = File::create(&tmp)?;
        out.write_all(&bytes)?;
        out.sync_data()?;
        #[cfg(test)]
        if let Some(pause) = self.pause_compaction.lock().take() {
            pause();
        }
        Ok((tmp, out))
    }

    /// Takes the file once more, copies into `out` what it gained since `from` and what is
    /// buffered, and puts `out` in its place.
    fn swap(&self, st: &mut MutexGuard<'_, State>, from: u64, tmp: &Path, mut out: File) -> io::Result<()> {
        let (batch, old) = self.take_file(st);
        let to = st.file_bytes;
        let failed = st.check();
        let copied = failed.and_then(|_| {
            MutexGuard::unlocked(st, || {
                let mut gained = vec![0u8; (to - from) as usize];
                old.read_exact_at(&mut gained, from)?;
                out.write_all(&gained)?;
                out.write_all(&batch.bytes)?;
                out.sync_all()?;
                fs::rename(tmp, &self.path).map(|_| out.metadata().map(|m| m.len()))
            })
        });
        let result = match copied {
            // The old file is untouched: what was taken goes back in front of the buffer.
            Err(e) => {
                let _ = fs::remove_file(tmp);
                let mut bytes = batch.bytes;
                bytes.append(&mut st.buffer);
                st.buffer = bytes;
                Err(e)
            }
            Ok(len) => {
                // The new file holds every record; appends from here on must reach it.
                let reopened = len.and_then(|len| {
                    let file = OpenOptions::new().read(true).append(true).open(&self.path)?;
                    sync_dir(&self.path)?;
                    Ok((file, len))
                });
                match reopened {
                    Ok((file, len)) => {
                        st.file = Arc::new(file);
                        st.file_bytes = len;
                        st.durable = batch.upto;
                        Ok(())
                    }
                    Err(e) => {
                        let failed = WriteFailed(Arc::new(e));
                        st.failed = Some(failed.clone());
                        Err(io::Error::other(failed))
                    }
                }
            }
        };
        st.writing = false;
        self.written.notify_all();
        result
    }
}

fn sync_dir(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(dir) => File::open(dir)?.sync_all(),
        None => Ok(()),
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

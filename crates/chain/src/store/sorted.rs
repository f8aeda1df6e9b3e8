//! An external sort of (key, value) records, for importing a genesis alloc larger than
//! memory in key order: records are buffered up to a chunk, sorted, and spilled to a file;
//! reading merges the spilled files (and the last chunk, still in memory) in key order.
//! Equal keys come out in the order they were pushed. A sort that never filled a chunk
//! never touches the disk.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Cause, ChainError, ChainResult, InternalError};

/// One record: the key it sorts by and its value.
pub(super) type Record = (Vec<u8>, Vec<u8>);
/// A record with its push sequence: (key, sequence, value).
type Sequenced = (Vec<u8>, u64, Vec<u8>);
/// A record waiting in the merge: (key, sequence, source, value).
type Queued = (Vec<u8>, u64, usize, Vec<u8>);

pub(super) struct ExternalSort {
    dir: PathBuf,
    name: &'static str,
    chunk: usize,
    /// The sequence keeps pushes of one key in order.
    buffer: Vec<Sequenced>,
    pushed: u64,
    spills: Vec<PathBuf>,
}

fn io(what: &Path, e: std::io::Error) -> ChainError {
    InternalError::SortSpill { path: what.to_path_buf(), source: Cause::new(e) }.into()
}

impl ExternalSort {
    /// Spills go to `dir` (created on the first spill) as `name-N`.
    pub fn new(dir: PathBuf, name: &'static str, chunk: usize) -> Self {
        Self { dir, name, chunk, buffer: Vec::new(), pushed: 0, spills: Vec::new() }
    }

    pub fn push(&mut self, key: Vec<u8>, value: Vec<u8>) -> ChainResult<()> {
        self.buffer.push((key, self.pushed, value));
        self.pushed += 1;
        if self.buffer.len() >= self.chunk {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> ChainResult<()> {
        self.buffer.sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        std::fs::create_dir_all(&self.dir).map_err(|e| io(&self.dir, e))?;
        let path = self.dir.join(format!("{}-{}", self.name, self.spills.len()));
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&path).map_err(|e| io(&path, e))?);
        for (key, seq, value) in self.buffer.drain(..) {
            for part in [
                &(key.len() as u32).to_le_bytes()[..],
                &key,
                &seq.to_le_bytes(),
                &(value.len() as u32).to_le_bytes(),
                &value,
            ] {
                out.write_all(part).map_err(|e| io(&path, e))?;
            }
        }
        out.flush().map_err(|e| io(&path, e))?;
        self.spills.push(path);
        Ok(())
    }

    /// Every record pushed, in key order (then push order).
    pub fn into_sorted(mut self) -> ChainResult<Merged> {
        self.buffer.sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let mut sources: Vec<Source> = Vec::with_capacity(self.spills.len() + 1);
        for path in &self.spills {
            let file = File::open(path).map_err(|e| io(path, e))?;
            sources.push(Source::File { reader: BufReader::with_capacity(256 << 10, file), path: path.clone() });
        }
        sources.push(Source::Memory(std::mem::take(&mut self.buffer).into_iter()));
        let mut heap = BinaryHeap::new();
        for (i, s) in sources.iter_mut().enumerate() {
            if let Some((key, seq, value)) = s.next()? {
                heap.push(Reverse((key, seq, i, value)));
            }
        }
        Ok(Merged { sources, heap, spills: std::mem::take(&mut self.spills) })
    }
}

impl Drop for ExternalSort {
    /// A sort given up (an error before `into_sorted`) leaves no files behind.
    fn drop(&mut self) {
        for path in &self.spills {
            let _ = std::fs::remove_file(path);
        }
    }
}

enum Source {
    File { reader: BufReader<File>, path: PathBuf },
    Memory(std::vec::IntoIter<Sequenced>),
}

impl Source {
    fn next(&mut self) -> ChainResult<Option<Sequenced>> {
        match self {
            Source::Memory(it) => Ok(it.next()),
            Source::File { reader, path } => {
                let mut len = [0u8; 4];
                match reader.read_exact(&mut len) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
                    Err(e) => return Err(io(path, e)),
                }
                let mut key = vec![0u8; u32::from_le_bytes(len) as usize];
                let mut seq = [0u8; 8];
                reader.read_exact(&mut key).map_err(|e| io(path, e))?;
                reader.read_exact(&mut seq).map_err(|e| io(path, e))?;
                reader.read_exact(&mut len).map_err(|e| io(path, e))?;
                let mut value = vec![0u8; u32::from_le_bytes(len) as usize];
                reader.read_exact(&mut value).map_err(|e| io(path, e))?;
                Ok(Some((key, u64::from_le_bytes(seq), value)))
            }
        }
    }
}

/// The merged records; the spill files are removed when it is dropped.
pub(super) struct Merged {
    sources: Vec<Source>,
    heap: BinaryHeap<Reverse<Queued>>,
    spills: Vec<PathBuf>,
}

impl Merged {
    pub fn next_record(&mut self) -> ChainResult<Option<Record>> {
        let Some(Reverse((key, _, i, value))) = self.heap.pop() else { return Ok(None) };
        if let Some((k, seq, v)) = self.sources[i].next()? {
            self.heap.push(Reverse((k, seq, i, v)));
        }
        Ok(Some((key, value)))
    }
}

impl Drop for Merged {
    fn drop(&mut self) {
        for path in &self.spills {
            let _ = std::fs::remove_file(path);
        }
    }
}

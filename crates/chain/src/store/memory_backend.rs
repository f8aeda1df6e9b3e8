//! The storage under an `--ephemeral` store: memory that is only taken where redb writes.
//!
//! redb's own in-memory backend is one `Vec` that `set_len` zero-fills and regrows: every
//! time redb extends its file the whole new length is touched and the vector may be copied,
//! so resident memory steps up by doubling, free space included. Here the file is a row of
//! fixed-size chunks, each allocated on its first write; unwritten ranges read as zeros.

use std::io;
use std::sync::Arc;

use parking_lot::RwLock;
use redb::StorageBackend;

/// Chunk size: small enough that sparse growth costs little, large enough that a page
/// write rarely spans two chunks.
const CHUNK: usize = 256 * 1024;

/// A handle: clones share the same memory (the store keeps one to report its size).
#[derive(Default, Clone)]
pub struct SparseMemoryBackend {
    inner: Arc<RwLock<Chunks>>,
}

#[derive(Default)]
struct Chunks {
    len: u64,
    chunks: Vec<Option<Box<[u8]>>>,
}

impl std::fmt::Debug for SparseMemoryBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let len = self.inner.read().len;
        f.debug_struct("SparseMemoryBackend").field("len", &len).field("resident", &self.resident_bytes()).finish()
    }
}

impl SparseMemoryBackend {
    /// Bytes of memory the chunks written so far hold.
    pub fn resident_bytes(&self) -> u64 {
        (self.inner.read().chunks.iter().filter(|c| c.is_some()).count() * CHUNK) as u64
    }
}

fn out_of_range() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "offset past the end of the in-memory store")
}

/// The (chunk, offset in chunk, length) pieces of the byte range `offset..offset + len`.
fn pieces(offset: u64, len: usize) -> impl Iterator<Item = (usize, usize, usize)> {
    let mut at = offset;
    let end = offset + len as u64;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let chunk = (at / CHUNK as u64) as usize;
        let within = (at % CHUNK as u64) as usize;
        let take = ((CHUNK - within) as u64).min(end - at) as usize;
        at += take as u64;
        Some((chunk, within, take))
    })
}

impl StorageBackend for SparseMemoryBackend {
    fn len(&self) -> io::Result<u64> {
        Ok(self.inner.read().len)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let inner = self.inner.read();
        if offset + out.len() as u64 > inner.len {
            return Err(out_of_range());
        }
        let mut done = 0;
        for (chunk, within, take) in pieces(offset, out.len()) {
            let dest = &mut out[done..done + take];
            match &inner.chunks[chunk] {
                Some(data) => dest.copy_from_slice(&data[within..within + take]),
                None => dest.fill(0),
            }
            done += take;
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut inner = self.inner.write();
        let chunks = len.div_ceil(CHUNK as u64) as usize;
        if len < inner.len {
            // Shrinking then growing again must read zeros: clear the kept chunk's tail.
            let within = (len % CHUNK as u64) as usize;
            if within != 0 {
                if let Some(Some(data)) = inner.chunks.get_mut(chunks - 1) {
                    data[within..].fill(0);
                }
            }
        }
        inner.chunks.resize_with(chunks, || None);
        inner.len = len;
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut inner = self.inner.write();
        if offset + data.len() as u64 > inner.len {
            return Err(out_of_range());
        }
        let mut done = 0;
        for (chunk, within, take) in pieces(offset, data.len()) {
            let target = inner.chunks[chunk].get_or_insert_with(|| vec![0u8; CHUNK].into_boxed_slice());
            target[within..within + take].copy_from_slice(&data[done..done + take]);
            done += take;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_writes_across_chunks_and_zeros_elsewhere() {
        let backend = SparseMemoryBackend::default();
        backend.set_len(3 * CHUNK as u64).unwrap();
        let data: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8 + 1).collect();
        let at = CHUNK as u64 - 300;
        backend.write(at, &data).unwrap();
        let mut back = vec![0u8; 1000];
        backend.read(at, &mut back).unwrap();
        assert_eq!(back, data);
        let mut untouched = vec![7u8; 64];
        backend.read(2 * CHUNK as u64 + 10, &mut untouched).unwrap();
        assert!(untouched.iter().all(|b| *b == 0));
        assert!(backend.read(3 * CHUNK as u64 - 10, &mut back).is_err());
        assert!(backend.write(3 * CHUNK as u64, &[1]).is_err());
        assert_eq!(backend.resident_bytes(), 2 * CHUNK as u64, "only the two chunks written hold memory");
    }

    #[test]
    fn shrinking_then_growing_reads_zeros() {
        let backend = SparseMemoryBackend::default();
        backend.set_len(2 * CHUNK as u64).unwrap();
        backend.write(CHUNK as u64 + 100, &[9; 200]).unwrap();
        backend.write(50, &[9; 200]).unwrap();
        backend.set_len(150).unwrap();
        backend.set_len(2 * CHUNK as u64).unwrap();
        let mut back = vec![1u8; 200];
        backend.read(CHUNK as u64 + 100, &mut back).unwrap();
        assert!(back.iter().all(|b| *b == 0), "a dropped chunk comes back as zeros");
        backend.read(50, &mut back).unwrap();
        assert_eq!(&back[..100], &[9; 100]);
        assert!(back[100..].iter().all(|b| *b == 0), "the kept chunk's tail was cleared");
    }
}

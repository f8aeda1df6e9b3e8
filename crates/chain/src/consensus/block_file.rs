//! Reading a blocks file: RLP-encoded blocks back to back, as `geth export` writes them.
//! Blocks are read one at a time, so the file can be larger than memory. The transaction
//! type is Ethereum's by default; an OP chain's blocks read as `OpTx` (deposits included).

use std::fs::File;
use std::io::{self, BufReader, ErrorKind, Read};
use std::marker::PhantomData;
use std::path::Path;

use alloy_consensus::{Block, TxEnvelope};
use alloy_rlp::Decodable;

use super::error::{BlockFileError, Malformed, Part};

/// A decoded block and where it sat in the file.
#[derive(Clone, Debug)]
pub struct FileBlock<T = TxEnvelope> {
    /// 0 for the first block in the file.
    pub index: u64,
    /// Byte offset of the block's first byte.
    pub offset: u64,
    /// Encoded length, RLP list header included.
    pub len: u64,
    pub block: Block<T>,
}

/// Refuses lengths no real block has before allocating for them: a corrupt length
/// prefix must fail with a message, not exhaust memory.
pub const MAX_BLOCK_BYTES: u64 = 256 * 1024 * 1024;

/// An iterator over the blocks of a stream. It stops at the first error (after yielding it).
pub struct BlockReader<R, T = TxEnvelope> {
    inner: R,
    index: u64,
    offset: u64,
    buf: Vec<u8>,
    failed: bool,
    tx: PhantomData<T>,
}

impl BlockReader<BufReader<File>> {
    /// Opens a blocks file of Ethereum blocks.
    pub fn open(path: &Path) -> Result<Self, BlockFileError> {
        Self::open_typed(path)
    }
}

impl<R: Read> BlockReader<R> {
    pub fn new(inner: R) -> Self {
        Self::typed(inner)
    }
}

impl<T> BlockReader<BufReader<File>, T> {
    /// Opens a blocks file whose transactions decode as `T`.
    pub fn open_typed(path: &Path) -> Result<Self, BlockFileError> {
        let file = File::open(path).map_err(|source| BlockFileError::Io { index: 0, offset: 0, source })?;
        Ok(Self::typed(BufReader::with_capacity(1 << 20, file)))
    }
}

impl<R: Read, T> BlockReader<R, T> {
    pub fn typed(inner: R) -> Self {
        Self { inner, index: 0, offset: 0, buf: Vec::new(), failed: false, tx: PhantomData }
    }

    /// Bytes consumed so far (the offset of the next block).
    pub fn position(&self) -> u64 {
        self.offset
    }

    fn malformed(&self, reason: Malformed) -> BlockFileError {
        BlockFileError::Malformed { index: self.index, offset: self.offset, reason }
    }

    fn io(&self, source: io::Error) -> BlockFileError {
        BlockFileError::Io { index: self.index, offset: self.offset, source }
    }

    /// Reads exactly `buf.len()` bytes; a short read is reported as truncation.
    fn fill(&mut self, start: usize, part: Part) -> Result<(), BlockFileError> {
        let mut filled = start;
        while filled < self.buf.len() {
            match self.inner.read(&mut self.buf[filled..]) {
                Ok(0) => {
                    return Err(self.malformed(Malformed::Truncated { part, present: filled, len: self.buf.len() }))
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io(e)),
            }
        }
        Ok(())
    }

    /// The next block's bytes into `self.buf`; `None` at a clean end of file.
    fn read_raw(&mut self) -> Result<Option<()>, BlockFileError> {
        let mut first = [0u8; 1];
        loop {
            match self.inner.read(&mut first) {
                Ok(0) => return Ok(None),
                Ok(_) => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io(e)),
            }
        }
        let prefix = first[0];
        if prefix < 0xc0 {
            return Err(self.malformed(Malformed::NotAList(prefix)));
        }
        // RLP list header: 0xc0..=0xf7 carry the length, 0xf8..=0xff say how many bytes hold it.
        let (header_len, payload_len) = if prefix <= 0xf7 {
            (1usize, (prefix - 0xc0) as u64)
        } else {
            let len_of_len = (prefix - 0xf7) as usize;
            self.buf.clear();
            self.buf.resize(len_of_len, 0);
            self.fill(0, Part::LengthPrefix)?;
            if self.buf[0] == 0 {
                return Err(self.malformed(Malformed::LeadingZero));
            }
            let len = self.buf.iter().fold(0u64, |acc, b| (acc << 8) | *b as u64);
            (1 + len_of_len, len)
        };
        if payload_len > MAX_BLOCK_BYTES {
            return Err(self.malformed(Malformed::TooLong { len: payload_len, max: MAX_BLOCK_BYTES }));
        }
        // Keep the header bytes too: the decoder wants the whole list.
        let mut header = Vec::with_capacity(header_len);
        header.push(prefix);
        header.extend_from_slice(&self.buf[..header_len - 1]);
        self.buf.clear();
        self.buf.extend_from_slice(&header);
        self.buf.resize(header_len + payload_len as usize, 0);
        self.fill(header_len, Part::Block)?;
        Ok(Some(()))
    }

    fn next_block(&mut self) -> Result<Option<FileBlock<T>>, BlockFileError>
    where
        T: Decodable,
    {
        if self.read_raw()?.is_none() {
            return Ok(None);
        }
        let mut slice = self.buf.as_slice();
        let block = Block::<T>::decode(&mut slice).map_err(|e| self.malformed(Malformed::Rlp(e)))?;
        if !slice.is_empty() {
            return Err(self.malformed(Malformed::LeftOver(slice.len())));
        }
        let len = self.buf.len() as u64;
        let out = FileBlock { index: self.index, offset: self.offset, len, block };
        self.index += 1;
        self.offset += len;
        Ok(Some(out))
    }
}

impl<R: Read, T: Decodable> Iterator for BlockReader<R, T> {
    type Item = Result<FileBlock<T>, BlockFileError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.next_block().transpose();
        if matches!(item, Some(Err(_))) {
            self.failed = true;
        }
        item
    }
}

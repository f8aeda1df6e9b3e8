//! `preconf-node export`: the stored chain as a blocks file, RLP blocks back to back, in
//! the format `geth export` writes and `preconf-node import` reads. Written to a temporary
//! file renamed into place at the end, so a failed export never leaves a partial file under
//! the name asked for.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use alloy_consensus::{Block, BlockBody};
use alloy_eips::eip4895::Withdrawals;
use alloy_primitives::B256;
use alloy_rlp::Encodable;
use preconf_op::OpTx;

use crate::error::{Cause, ChainResult, ConfigError, InternalError};
use crate::store::Store;

/// What an export wrote.
#[derive(Clone, Debug)]
pub struct ExportSummary {
    pub from: u64,
    pub to: u64,
    pub bytes: u64,
    /// Hash of the last block written.
    pub last_hash: B256,
}

/// Writes blocks `from..=to` (default: 1 and the head; block 0 comes from the genesis
/// file on import) to `out`; `progress` hears each block number written.
pub fn export_blocks(
    store: &Store,
    from: Option<u64>,
    to: Option<u64>,
    out: &Path,
    mut progress: impl FnMut(u64),
) -> ChainResult<ExportSummary> {
    let snapshot = store.snapshot()?;
    let head = snapshot.head().ok_or(ConfigError::NoChain)?;
    let from = from.unwrap_or(1);
    let to = to.unwrap_or(head);
    if from > to || to > head {
        return Err(ConfigError::ExportRange { from, to, head }.into());
    }
    snapshot.check_history(from)?;
    let partial = out.with_extension("partial");
    let io = cannot_write(&partial);
    let file = File::create(&partial).map_err(&io)?;
    let mut writer = BufWriter::with_capacity(1 << 20, file);
    let mut bytes = 0u64;
    let mut last_hash = B256::ZERO;
    let mut encoded = Vec::new();
    for n in from..=to {
        let missing = || InternalError::MissingBlock(n);
        let header = snapshot.header(n)?.ok_or_else(missing)?;
        let body = snapshot.body(n)?.ok_or_else(missing)?;
        let transactions = body
            .txs
            .iter()
            .map(|t| OpTx::decode_2718(&t.raw))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| InternalError::CorruptTx { number: Some(n), source: Cause::new(e) })?;
        let withdrawals = header.withdrawals_root.is_some().then(|| Withdrawals::new(body.withdrawals));
        last_hash = snapshot.block_hash(n)?.ok_or_else(missing)?;
        let block = Block { header, body: BlockBody { transactions, ommers: body.ommers, withdrawals } };
        encoded.clear();
        block.encode(&mut encoded);
        writer.write_all(&encoded).map_err(&io)?;
        bytes += encoded.len() as u64;
        progress(n);
    }
    writer.flush().map_err(&io)?;
    writer.into_inner().map_err(|e| io(e.into_error()))?.sync_all().map_err(&io)?;
    std::fs::rename(&partial, out).map_err(cannot_write(out))?;
    Ok(ExportSummary { from, to, bytes, last_hash })
}

/// A failed write of `path`, for `map_err`.
fn cannot_write(path: &Path) -> impl Fn(std::io::Error) -> ConfigError + '_ {
    move |e| ConfigError::Write { path: path.to_path_buf(), source: Cause::new(e) }
}

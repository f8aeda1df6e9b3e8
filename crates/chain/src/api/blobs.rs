//! Blob transactions (EIP-4844) as `eth_sendRawTransaction` receives them: the network
//! form with its sidecar (blobs, commitments and KZG proofs — EIP-7594 cell proofs from
//! Osaka on). The product is an L2 without blobs and refuses them; `--profile geth` on a
//! node that serves a stored chain (`--no-build`, nothing is executed) accepts them as geth
//! does once the sidecar checks out, and pools the transaction without its sidecar.

use alloy_consensus::transaction::{EthereumTxEnvelope, TxEip4844WithSidecar};
use alloy_consensus::{Signed, TxEip4844Variant, TxEnvelope};
use alloy_eips::eip2718::Decodable2718;
use alloy_eips::eip4844::env_settings::EnvKzgSettings;
use alloy_eips::eip7594::BlobTransactionSidecarVariant;

use crate::error::{ChainResult, InvalidParam, Rejection};
use crate::spec::ChainSpec;

/// geth's blob pool limit on one transaction with its sidecar.
pub const MAX_BLOB_TX_BYTES: usize = 1024 * 1024;

type NetworkTx = EthereumTxEnvelope<TxEip4844WithSidecar<BlobTransactionSidecarVariant>>;

/// Loads the KZG trusted setup on a thread of its own, so that the first blob transaction
/// does not wait for it (seconds on a busy machine) behind its sender's request.
pub fn load_kzg_settings_in_background() {
    let _ = std::thread::Builder::new().name("preconf-kzg-setup".into()).spawn(|| {
        EnvKzgSettings::Default.get();
    });
}

/// Decodes a blob transaction in its network form and checks its sidecar for a block at
/// `timestamp`: the fork's sidecar version (cell proofs from Osaka on, blob proofs before),
/// the blob count, the versioned hashes against the commitments, and every KZG proof.
/// Returns the transaction as blocks carry it (no sidecar).
pub fn decode_blob_tx(raw: &[u8], spec: &ChainSpec, timestamp: u64) -> ChainResult<TxEnvelope> {
    if raw.len() > MAX_BLOB_TX_BYTES {
        return Err(Rejection::Oversized { size: raw.len(), limit: MAX_BLOB_TX_BYTES }.into());
    }
    let Some(params) = spec.blob_params_at(timestamp) else {
        return Err(Rejection::BlobsBeforeCancun.into());
    };
    let tx = NetworkTx::decode_2718_exact(raw).map_err(|e| InvalidParam::BlobWithoutSidecar(e.to_string()))?;
    let EthereumTxEnvelope::Eip4844(signed) = tx else {
        return Err(InvalidParam::NotABlobTx.into());
    };
    let (with_sidecar, signature, hash) = signed.into_parts();
    let TxEip4844WithSidecar { tx, sidecar } = with_sidecar;
    let blobs = tx.blob_versioned_hashes.len();
    if blobs == 0 {
        return Err(Rejection::Blobless.into());
    }
    if blobs as u64 > params.max_blobs_per_tx {
        return Err(Rejection::TooManyBlobs { have: blobs, permitted: params.max_blobs_per_tx }.into());
    }
    let osaka = spec.is_osaka(timestamp);
    match (&sidecar, osaka) {
        (BlobTransactionSidecarVariant::Eip7594(_), true) | (BlobTransactionSidecarVariant::Eip4844(_), false) => {}
        (_, true) => return Err(Rejection::BlobProofsAfterOsaka.into()),
        (_, false) => return Err(Rejection::CellProofsBeforeOsaka.into()),
    }
    sidecar
        .validate(&tx.blob_versioned_hashes, EnvKzgSettings::Default.get())
        .map_err(|e| Rejection::InvalidSidecar(e.to_string()))?;
    Ok(TxEnvelope::Eip4844(Signed::new_unchecked(TxEip4844Variant::TxEip4844(tx), signature, hash)))
}

//! eth_getProof (EIP-1186): Merkle proofs of an account and its storage slots, read from
//! the persisted trie at a recent sealed block, or at `pending` (the trie with the
//! pre-confirmed changes laid over it, computed for the request and never written).

use std::sync::Arc;

use alloy_primitives::{keccak256, Address, B256, U256};
use preconf_trie::{account_proof, AccountProof, NodeReader, Overlay};

use crate::chain_state::ChainState;
use crate::changes::StateChanges;
use crate::error::ChainResult;
use crate::store::trie::state_root;
use crate::types::BlockId;
use crate::view::Resolved;

pub struct Proofs {
    chain: Arc<ChainState>,
}

impl Proofs {
    pub fn new(chain: Arc<ChainState>) -> Self {
        Self { chain }
    }

    /// The proof of `address` and `slots` at `block`. Sealed blocks older than the trie
    /// history (the last 128) answer `Unavailable`, naming how far back proofs go.
    pub fn proof(&self, address: Address, slots: &[U256], block: BlockId) -> ChainResult<AccountProof> {
        let view = self.chain.view();
        let hashed_slots: Vec<B256> = slots.iter().map(|s| keccak256(B256::from(*s))).collect();
        let hashed = keccak256(address);
        // Sealed blocks still being committed: their trie nodes are their diffs over the
        // committed trie (applying them again once committed changes nothing).
        match view.resolve(block)? {
            Resolved::Sealed(n) => Ok(account_proof(&*view.snapshot.trie_reader_at(n)?, hashed, &hashed_slots)?),
            Resolved::Pending => {
                let mut changes = StateChanges::default();
                if let Some(p) = &view.pending {
                    for layer in p.overlay.layers() {
                        changes.extend((**layer).clone());
                    }
                }
                pending_proof(&*view.snapshot.trie_reader_at(u64::MAX)?, &changes, hashed, &hashed_slots)
            }
        }
    }
}

/// The proof over `base` with the pending `changes` laid over it.
fn pending_proof(
    base: impl NodeReader,
    changes: &StateChanges,
    hashed: B256,
    hashed_slots: &[B256],
) -> ChainResult<AccountProof> {
    let (_, diff) = state_root(&base, changes)?;
    Ok(account_proof(&Overlay::new(&diff, base), hashed, hashed_slots)?)
}

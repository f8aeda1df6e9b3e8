//! Uncle (ommer) rules of proof-of-work blocks, as ethash clients apply them: at most two
//! uncles, each a header whose parent is one of the block's 2nd to 7th ancestors (an uncle
//! on the block's own parent would be the block's sibling), that is neither an ancestor nor
//! an uncle already included in the last seven blocks, and that is a valid header on its
//! parent (the same rules as a block's header, seal aside).

use std::collections::HashSet;

use alloy_consensus::{Block, Header, TxEnvelope};
use alloy_primitives::B256;

use super::error::{Basis, ConsensusError, Field, Found, Rule, Subject};
use super::header::check_uncle_header;
use crate::spec::ChainSpec;

/// The ancestors an uncle's parent may be among (and whose uncles may not be included again).
pub const UNCLE_GENERATIONS: usize = 7;

/// An ancestor of the block being checked, as the uncle rules need it.
#[derive(Clone, Debug)]
pub struct Ancestor {
    pub hash: B256,
    pub header: Header,
    /// Hashes of the uncles it included.
    pub uncles: Vec<B256>,
}

/// Checks the block's uncles (their count is [`super::check_body`]'s) against its ancestors, newest (the parent) first, at most
/// [`UNCLE_GENERATIONS`] of them (fewer near genesis).
pub fn check_uncles(
    spec: &ChainSpec,
    block: &Block<TxEnvelope>,
    block_hash: B256,
    ancestors: &[Ancestor],
) -> Result<(), ConsensusError> {
    let n = block.header.number;
    let ommers = &block.body.ommers;
    if ommers.is_empty() {
        return Ok(());
    }
    let ancestors = &ancestors[..ancestors.len().min(UNCLE_GENERATIONS)];
    let mut included: HashSet<B256> = ancestors.iter().flat_map(|a| a.uncles.iter().copied()).collect();
    included.insert(block_hash);
    for (i, uncle) in ommers.iter().enumerate() {
        let subject = Subject::Uncle(i);
        let refuse = |found: Found, required: Rule| {
            Err(ConsensusError::with(n, Field::Ommers, subject, found, Basis::Rules, required))
        };
        let hash = uncle.hash_slow();
        if !included.insert(hash) {
            return refuse(Found::Hash(hash), Rule::UncleNotIncluded);
        }
        if ancestors.iter().any(|a| a.hash == hash) {
            return refuse(Found::AncestorHash(hash), Rule::NotAncestor);
        }
        let parent = ancestors.iter().find(|a| a.hash == uncle.parent_hash);
        let Some(parent) = parent.filter(|_| uncle.parent_hash != block.header.parent_hash) else {
            return refuse(Found::Parent(uncle.parent_hash), Rule::ParentAmongAncestors);
        };
        check_uncle_header(spec, &parent.header, uncle, n, subject)?;
    }
    Ok(())
}

//! Uncle rules against the block's real ancestors: every uncle of the kit chain (18 blocks
//! have one) passes, and each way an uncle can be bad is refused naming the uncle.

use alloy_consensus::{Block, Header, TxEnvelope};
use alloy_primitives::B256;
use preconf_chain::consensus::{check_uncles, Ancestor, ConsensusError, Field};

use super::kit;

/// Block `n` of the kit chain and its ancestors (parent first, at most seven).
fn with_ancestors(n: usize) -> (Block<TxEnvelope>, Vec<Ancestor>) {
    let spec = kit::spec();
    let (genesis, _) = kit::genesis(&spec);
    let mut blocks: Vec<(Header, Vec<B256>)> = vec![(genesis, Vec::new())];
    blocks.extend(kit::blocks().into_iter().map(|b| (b.header, b.body.ommers.iter().map(Header::hash_slow).collect())));
    let block = kit::blocks().swap_remove(n - 1);
    let ancestors = (n.saturating_sub(7)..n)
        .rev()
        .map(|i| Ancestor { hash: blocks[i].0.hash_slow(), header: blocks[i].0.clone(), uncles: blocks[i].1.clone() })
        .collect();
    (block, ancestors)
}

fn check(n: usize, tamper: impl FnOnce(&mut Block<TxEnvelope>, &[Ancestor])) -> Result<(), ConsensusError> {
    let (mut block, ancestors) = with_ancestors(n);
    tamper(&mut block, &ancestors);
    check_uncles(&kit::spec(), &block, block.header.hash_slow(), &ancestors)
}

/// The first block of the kit chain that includes an uncle.
fn first_with_uncle() -> usize {
    kit::blocks().iter().position(|b| !b.body.ommers.is_empty()).unwrap() + 1
}

#[test]
fn the_chains_uncles_pass_with_their_ancestors() {
    let blocks = kit::blocks();
    let with_uncles: Vec<usize> = (1..=blocks.len()).filter(|n| !blocks[n - 1].body.ommers.is_empty()).collect();
    assert_eq!(with_uncles.len(), 18);
    for n in with_uncles {
        check(n, |_, _| {}).unwrap_or_else(|e| panic!("block {n}: {e}"));
    }
}

#[test]
fn bad_uncles_are_refused_naming_the_uncle() {
    let n = first_with_uncle();
    let refused = |tamper: fn(&mut Block<TxEnvelope>, &[Ancestor])| check(n, tamper).expect_err("refused");

    // The uncle's own header rules, on its parent: gas limit one below the bound.
    let e = refused(|b, a| {
        let parent = &a.iter().find(|x| x.hash == b.body.ommers[0].parent_hash).unwrap().header;
        b.body.ommers[0].gas_limit = parent.gas_limit - parent.gas_limit / 1024;
    });
    assert_eq!((e.field, e.subject.to_string().as_str()), (Field::GasLimit, "uncle 0"));
    assert!(e.to_string().starts_with(&format!("block {n}: invalid gasLimit: uncle 0 has ")), "{e}");
    let e = refused(|b, _| b.body.ommers[0].gas_used = b.body.ommers[0].gas_limit + 1);
    assert_eq!((e.field, e.subject.to_string().as_str()), (Field::GasUsed, "uncle 0"));
    let e = refused(|b, _| b.body.ommers[0].difficulty += alloy_primitives::U256::from(1));
    assert_eq!((e.field, e.subject.to_string().as_str()), (Field::Difficulty, "uncle 0"));
    let e = refused(|b, _| b.body.ommers[0].timestamp = 0);
    assert_eq!(e.field, Field::Timestamp);

    // Where it hangs: on the block's own parent (a sibling), nowhere known, or it is an
    // ancestor, or it is included twice.
    let e = refused(|b, _| b.body.ommers[0].parent_hash = b.header.parent_hash);
    assert_eq!((e.field, e.subject.to_string().as_str()), (Field::Ommers, "uncle 0"));
    assert!(e.to_string().contains("a parent among the block's 2nd to 7th ancestors"), "{e}");
    let e = refused(|b, _| b.body.ommers[0].parent_hash = B256::repeat_byte(7));
    assert_eq!(e.field, Field::Ommers);
    let e = refused(|b, a| b.body.ommers[0] = a[1].header.clone());
    assert!(e.to_string().contains("not an ancestor"), "{e}");
    let e = refused(|b, _| {
        let u = b.body.ommers[0].clone();
        b.body.ommers = vec![u.clone(), u];
    });
    assert!(e.to_string().contains("uncle 1 has hash"), "{e}");
}

#[test]
fn an_uncle_already_included_by_an_ancestor_is_refused() {
    let blocks = kit::blocks();
    // A later block (within seven) that re-includes the first uncle of an earlier block.
    let first = first_with_uncle();
    let uncle = blocks[first - 1].body.ommers[0].clone();
    let n = first + 1;
    let e = check(n, move |b, _| b.body.ommers = vec![uncle]).expect_err("refused");
    assert_eq!(e.field, Field::Ommers);
    assert!(e.to_string().contains("an uncle not included before"), "{e}");
}

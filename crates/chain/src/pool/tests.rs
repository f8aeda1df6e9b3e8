use super::*;
use alloy_consensus::{SignableTransaction, TxEip1559, TxEnvelope};
use alloy_primitives::{Address, TxKind, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;

fn signer(i: u8) -> PrivateKeySigner {
    PrivateKeySigner::from_bytes(&B256::repeat_byte(i + 1)).unwrap()
}

/// A signed EIP-1559 transfer with the given fee cap and tip (gwei).
fn tx(key: &PrivateKeySigner, nonce: u64, max_fee_gwei: u128, tip_gwei: u128) -> PooledTx {
    let t = TxEip1559 {
        chain_id: 31337,
        nonce,
        gas_limit: 21_000,
        max_fee_per_gas: max_fee_gwei * 1_000_000_000,
        max_priority_fee_per_gas: tip_gwei * 1_000_000_000,
        to: TxKind::Call(Address::repeat_byte(0xaa)),
        value: U256::from(1),
        ..Default::default()
    };
    let sig = key.sign_hash_sync(&t.signature_hash()).unwrap();
    let env: TxEnvelope = t.into_signed(sig).into();
    PooledTx::new(env, Bytes::new(), key.address())
}

fn limits() -> PoolLimits {
    PoolLimits { max_per_sender: 16, max_total: 100 }
}

#[test]
fn orders_by_tip_across_senders_and_by_nonce_within_a_sender() {
    let (a, b) = (signer(0), signer(1));
    let mut pool = Pool::new(limits());
    pool.add(tx(&a, 0, 10, 1), 0).unwrap();
    pool.add(tx(&a, 1, 10, 5), 0).unwrap();
    pool.add(tx(&b, 0, 10, 3), 0).unwrap();
    let order: Vec<(Address, u64)> = pool.best(1, |_| 0).map(|t| (t.sender, t.nonce)).collect();
    // b's tip 3 beats a's head (tip 1); a's nonce 1 waits for a's nonce 0 despite tip 5.
    assert_eq!(order, vec![(b.address(), 0), (a.address(), 0), (a.address(), 1)]);
}

#[test]
fn replacement_needs_ten_percent_on_both_fee_cap_and_tip() {
    let a = signer(0);
    let mut pool = Pool::new(limits());
    pool.add(tx(&a, 0, 100, 10), 0).unwrap();
    let e = pool.add(tx(&a, 0, 109, 11), 0).unwrap_err();
    assert_eq!(e.to_string(), "replacement transaction underpriced");
    let e = pool.add(tx(&a, 0, 110, 10), 0).unwrap_err();
    assert_eq!(e.to_string(), "replacement transaction underpriced", "tip unchanged");
    let first = pool.best(1, |_| 0).next().unwrap().hash;
    let added = pool.add(tx(&a, 0, 110, 11), 0).unwrap();
    assert_eq!(added.replaced, Some(first));
    assert_eq!(pool.len(), 1);
    assert!(matches!(pool.lookup(&first).unwrap().status(0), TxStatus::Dropped(_)));
}

#[test]
fn already_known_and_nonce_too_low() {
    let a = signer(0);
    let mut pool = Pool::new(limits());
    let t = tx(&a, 3, 10, 1);
    let again = tx(&a, 3, 10, 1);
    pool.add(t, 3).unwrap();
    assert_eq!(pool.add(again, 3).unwrap_err().to_string(), "already known");
    let low = pool.add(tx(&a, 2, 10, 1), 3).unwrap_err().to_string();
    assert!(low.starts_with("nonce too low"), "{low}");
}

#[test]
fn gap_is_queued_then_promoted_when_filled() {
    let a = signer(0);
    let mut pool = Pool::new(limits());
    let t2 = tx(&a, 2, 10, 1);
    let h2 = t2.hash;
    pool.add(t2, 0).unwrap();
    assert_eq!(pool.best(1, |_| 0).count(), 0, "nonce 2 waits for 0 and 1");
    assert!(matches!(pool.lookup(&h2).unwrap().status(0), TxStatus::Queued));
    assert_eq!(pool.next_nonce(&a.address(), 0), 0);
    pool.add(tx(&a, 0, 10, 1), 0).unwrap();
    pool.add(tx(&a, 1, 10, 1), 0).unwrap();
    let nonces: Vec<u64> = pool.best(1, |_| 0).map(|t| t.nonce).collect();
    assert_eq!(nonces, vec![0, 1, 2]);
    assert!(matches!(pool.lookup(&h2).unwrap().status(0), TxStatus::Pending));
    assert_eq!(pool.next_nonce(&a.address(), 0), 3);
}

#[test]
fn fee_cap_below_base_fee_waits() {
    let a = signer(0);
    let mut pool = Pool::new(limits());
    pool.add(tx(&a, 0, 2, 1), 0).unwrap();
    assert_eq!(pool.best(3_000_000_000, |_| 0).count(), 0);
    assert_eq!(pool.best(1_000_000_000, |_| 0).count(), 1);
}

#[test]
fn per_sender_limit_and_eviction_when_full() {
    let mut pool = Pool::new(PoolLimits { max_per_sender: 2, max_total: 3 });
    let (a, b, c) = (signer(0), signer(1), signer(2));
    pool.add(tx(&a, 0, 10, 1), 0).unwrap();
    pool.add(tx(&a, 1, 10, 1), 0).unwrap();
    let e = pool.add(tx(&a, 2, 10, 1), 0).unwrap_err().to_string();
    assert!(e.starts_with("account limit exceeded"), "{e}");
    pool.add(tx(&b, 0, 10, 2), 0).unwrap();
    // Full: a cheaper newcomer is refused ...
    assert_eq!(pool.add(tx(&c, 0, 10, 1), 0).unwrap_err().to_string(), "txpool is full");
    // ... a better-paying one evicts the cheapest *last* transaction of another sender (a's nonce 1).
    let victim = pool.best(1, |_| 0).find(|t| t.sender == a.address() && t.nonce == 1).unwrap().hash;
    let added = pool.add(tx(&c, 0, 10, 5), 0).unwrap();
    assert_eq!(added.evicted, vec![victim]);
    assert!(
        matches!(pool.lookup(&victim).unwrap().status(0), TxStatus::Dropped(r) if r.to_string().starts_with("evicted"))
    );
    assert_eq!(pool.len(), 3);
}

#[test]
fn skip_sender_stops_its_run() {
    let (a, b) = (signer(0), signer(1));
    let mut pool = Pool::new(limits());
    pool.add(tx(&a, 0, 10, 5), 0).unwrap();
    pool.add(tx(&a, 1, 10, 5), 0).unwrap();
    pool.add(tx(&b, 0, 10, 1), 0).unwrap();
    let mut best = pool.best(1, |_| 0);
    let first = best.next().unwrap();
    assert_eq!(first.sender, a.address());
    best.skip_sender(&a.address());
    let rest: Vec<Address> = best.map(|t| t.sender).collect();
    assert_eq!(rest, vec![b.address()]);
}

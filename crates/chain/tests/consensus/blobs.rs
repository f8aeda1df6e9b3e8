//! Blob parameters per fork (the genesis blobSchedule and BPO times) and EIP-7918.

use alloy_eips::eip7840::BlobParams;
use preconf_chain::consensus::blob::{blob_base_fee, excess_blob_gas, GAS_PER_BLOB};
use preconf_chain::consensus::header_blob_base_fee;

use super::kit;

fn triple(p: &BlobParams) -> (u64, u64, u128) {
    (p.target_blob_count, p.max_blob_count, p.update_fraction)
}

#[test]
fn blob_schedule_follows_fork_times_including_bpo() {
    let spec = kit::spec();
    assert_eq!(spec.blob_params_at(419), None, "no blobs before Cancun (time 420)");
    let at = |t| spec.blob_params_at(t).unwrap_or_else(|| panic!("blob params at {t}"));
    assert_eq!(triple(&at(420)), (3, 6, 3_338_477));
    assert_eq!(triple(&at(449)), (3, 6, 3_338_477));
    assert_eq!(triple(&at(450)), (6, 9, 5_007_716));
    assert_eq!(triple(&at(480)), (6, 9, 5_007_716));
    assert_eq!(triple(&at(510)), (10, 15, 8_346_193));
    assert_eq!(triple(&at(539)), (10, 15, 8_346_193));
    assert_eq!(triple(&at(540)), (14, 21, 11_684_671));
    assert_eq!(triple(&at(10_000)), (14, 21, 11_684_671));
    // EIP-7918's base cost applies from Osaka on, BPO forks included.
    assert_eq!([450, 480, 510, 540].map(|t| at(t).blob_base_cost), [0, 8192, 8192, 8192]);
}

#[test]
fn chain_blocks_pay_the_minimum_blob_fee() {
    // Every block carries at most one blob, below every target: excess stays 0, fee 1 wei.
    let spec = kit::spec();
    for b in kit::blocks() {
        let fee = header_blob_base_fee(&spec, &b.header);
        assert_eq!(fee.is_some(), b.header.number >= 42, "block {}", b.header.number);
        assert!(fee.is_none_or(|f| f == 1));
    }
}

#[test]
fn excess_blob_gas_before_and_after_osaka() {
    let spec = kit::spec();
    let bpo1 = spec.blob_params_at(510).unwrap();
    let target = 10 * GAS_PER_BLOB;
    let used = 12 * GAS_PER_BLOB;
    let excess = 3_000_000;
    // Blob fee at this excess: e^(3e6/8346193) ≈ 1.43 -> 1 wei per blob gas.
    assert_eq!(blob_base_fee(&bpo1, excess), 1);
    // Execution base fee 1 gwei: 8192 * 1e9 outprices 131072 * 1, so EIP-7918 applies and
    // the excess grows by used * (max - target) / max = 12 * 131072 * 5 / 15.
    assert_eq!(excess_blob_gas(&bpo1, excess, used, 1_000_000_000), excess + 4 * GAS_PER_BLOB);
    // Base fee 16 wei: 8192 * 16 = 131072 * 1, not above: EIP-4844's used - target.
    assert_eq!(excess_blob_gas(&bpo1, excess, used, 16), excess + used - target);
    assert_eq!(excess_blob_gas(&bpo1, excess, used, 17), excess + 4 * GAS_PER_BLOB);
    // Below target the excess resets, whatever the fees.
    assert_eq!(excess_blob_gas(&bpo1, 0, 9 * GAS_PER_BLOB, 1_000_000_000), 0);
    // Prague has no reserve price: EIP-4844 with Prague's target of 6.
    let prague = spec.blob_params_at(450).unwrap();
    assert_eq!(excess_blob_gas(&prague, excess, used, 1_000_000_000), excess + 6 * GAS_PER_BLOB);
}

#[test]
fn blob_base_fee_uses_the_fork_update_fraction() {
    let spec = kit::spec();
    // Same excess, different forks: a larger fraction makes blobs cheaper.
    let excess = 20_000_000;
    let fees: Vec<u128> =
        [420, 450, 510, 540].iter().map(|t| blob_base_fee(&spec.blob_params_at(*t).unwrap(), excess)).collect();
    // fake_exponential(1, 2e7, f) ≈ e^(2e7/f): f = 3338477 -> e^5.99 ≈ 399; 5007716 -> e^3.99 ≈ 54;
    // 8346193 -> e^2.40 ≈ 10 (integer Taylor sums truncate); 11684671 -> e^1.71 ≈ 5.
    assert_eq!(fees, vec![399, 54, 10, 5]);
}

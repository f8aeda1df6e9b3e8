//! Proof-of-work rewards: worked by hand from the ethash formula for blocks with uncles.

use alloy_primitives::{Address, U256};
use preconf_chain::consensus::{block_reward, block_rewards};

use super::kit;

const ETHER: u128 = 1_000_000_000_000_000_000;

fn wei(ether_thousandths: u128) -> U256 {
    U256::from(ether_thousandths * ETHER / 100_000)
}

#[test]
fn rewards_of_blocks_with_uncles_match_the_formula_by_hand() {
    let spec = kit::spec();
    let blocks = kit::blocks();
    // (block, base reward in 1e-5 ETH, uncle's share, miner's total), all uncles one
    // generation old: uncle gets (8 + (n-1) - n)/8 = 7/8, miner reward + reward/32.
    let cases = [
        (3u64, 500_000u128, 437_500u128, 515_625u128), // Homestead: 5 ETH
        (10, 300_000, 262_500, 309_375),               // Byzantium: 3 ETH
        (12, 200_000, 175_000, 206_250),               // Constantinople: 2 ETH
        (34, 200_000, 175_000, 206_250),               // Gray Glacier, last uncle before the Merge
    ];
    for (number, base, uncle_share, miner) in cases {
        let b = &blocks[number as usize - 1];
        assert_eq!(b.body.ommers.len(), 1, "block {number} has one uncle");
        let uncle = &b.body.ommers[0];
        assert_eq!(uncle.number, number - 1);
        assert_eq!(block_reward(&spec, number), wei(base));
        let got = block_rewards(&spec, &b.header, &b.body.ommers);
        assert_eq!(
            got,
            vec![(uncle.beneficiary, wei(uncle_share)), (b.header.beneficiary, wei(miner))],
            "block {number}"
        );
    }
}

#[test]
fn older_uncles_and_two_uncles_scale_as_the_formula_says() {
    let spec = kit::spec();
    let mut block = kit::blocks()[9].clone(); // block 10, Byzantium (3 ETH)
    let mut older = block.body.ommers[0].clone();
    older.number = 4; // six generations back: (8 + 4 - 10)/8 = 2/8
    older.beneficiary = Address::repeat_byte(0x44);
    block.body.ommers.push(older);
    block.header.beneficiary = Address::repeat_byte(0x10);
    let got = block_rewards(&spec, &block.header, &block.body.ommers);
    assert_eq!(
        got,
        vec![
            (Address::ZERO, wei(262_500)),
            (Address::repeat_byte(0x44), wei(75_000)),
            (Address::repeat_byte(0x10), wei(300_000 + 2 * 9_375)),
        ]
    );
}

#[test]
fn blocks_without_uncles_pay_the_base_reward_and_pos_blocks_pay_nothing() {
    let spec = kit::spec();
    for b in kit::blocks() {
        let rewards = block_rewards(&spec, &b.header, &b.body.ommers);
        let n = b.header.number;
        let base = match n {
            1..=8 => 500_000,
            9..=11 => 300_000,
            _ => 200_000,
        };
        if n >= 36 {
            assert!(rewards.is_empty(), "block {n} is proof of stake");
        } else if b.body.ommers.is_empty() {
            assert_eq!(rewards, vec![(b.header.beneficiary, wei(base))], "block {n}");
        } else {
            assert_eq!(rewards.len(), 2, "block {n}");
        }
    }
}

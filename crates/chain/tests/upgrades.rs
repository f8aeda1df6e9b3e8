//! The builder on its own clock (no Engine API) through the OP forks' first blocks, on Base's
//! real genesis (test/fixtures/op/base-mainnet-block-1, every fork after Regolith still to
//! come): each first block opens as op-node's derivation opens it, with the L1-info deposit
//! in the format the chain's L1Block takes then and the fork's network upgrade transactions,
//! and takes no pool transaction. Blocks are sealed by the test methods (manual mining), at
//! the clock's time or at the timestamps each test names.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use alloy_consensus::{SignableTransaction, Transaction as _, TxEip1559, TxEnvelope};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{address, b256, keccak256, Address, Bytes, TxKind, B256, U256};
use alloy_rpc_types_eth::{TransactionInput, TransactionRequest};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use preconf_chain::dev::requests::{AccountEdit, Balance, Mining};
use preconf_chain::types::BlockData;
use preconf_chain::{BlockId, ChainConfig, Node};
use preconf_op::dev::{GAS_PRICE_ORACLE, L1_BLOCK};
use preconf_op::l1info::{receipt_fields, L1Info};
use preconf_op::upgrades::{self, OPERATOR_FEE_VAULT};
use preconf_op::{OpConfig, OpSpecId, OpTx};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/op");
/// ERC-1967's implementation slot, where each proxy names its implementation.
const IMPLEMENTATION_SLOT: B256 = b256!("360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc");
const ETHER: u128 = 1_000_000_000_000_000_000;

/// Base's genesis (`config: null`) and its registry TOML's OP config.
fn base() -> (serde_json::Value, OpConfig) {
    let gz = std::fs::File::open(format!("{FIXTURES}/base-mainnet-block-1/genesis.json.gz")).unwrap();
    let genesis = serde_json::from_reader(flate2::read::GzDecoder::new(gz)).unwrap();
    let toml = std::fs::read_to_string(format!("{FIXTURES}/chain-configs/base-mainnet.toml")).unwrap();
    (genesis, OpConfig::from_chain_config_file(&toml).unwrap())
}

/// A node building `genesis` with `config` on its own clock, blocks sealed only when asked.
fn open(name: &str, mut genesis: serde_json::Value, config: &OpConfig) -> (Node, PathBuf) {
    genesis["config"] = config.genesis_config();
    let path = std::env::temp_dir().join(format!("preconf-upgrades-{name}-{}.json", std::process::id()));
    std::fs::write(&path, genesis.to_string()).unwrap();
    let node = Node::open(ChainConfig {
        genesis_file: Some(path.clone()),
        dev: Some(true),
        preconf_interval_ms: 20,
        block_time_ms: 3_600_000,
        ..Default::default()
    })
    .expect("the builder builds an OP genesis with proxies on its own clock");
    node.dev().unwrap().set_mining(Mining::Manual).unwrap();
    (node, path)
}

fn block(node: &Node, n: u64) -> std::sync::Arc<BlockData> {
    node.api().blocks.by_id(BlockId::Number(n)).unwrap().expect("the block")
}

fn storage(node: &Node, address: Address, slot: B256, n: u64) -> B256 {
    node.api().state.storage(address, slot.into(), BlockId::Number(n)).unwrap().into()
}

fn code_hash(node: &Node, address: Address, n: u64) -> B256 {
    keccak256(node.api().state.code(address, BlockId::Number(n)).unwrap())
}

fn implementation(node: &Node, proxy: Address, n: u64) -> Address {
    Address::from_word(storage(node, proxy, IMPLEMENTATION_SLOT, n))
}

/// The GasPriceOracle's `is<Fork>()` flag at block `n` (false where the oracle has no such
/// function yet).
fn oracle_flag(node: &Node, fork: &str, n: u64) -> bool {
    let call = TransactionRequest {
        to: Some(TxKind::Call(GAS_PRICE_ORACLE)),
        input: TransactionInput::new(Bytes::copy_from_slice(&keccak256(format!("is{fork}()"))[..4])),
        ..Default::default()
    };
    let out = node.api().execution.call(&call, BlockId::Number(n), None, None);
    out.is_ok_and(|out| U256::from_be_slice(&out) == U256::from(1))
}

/// The L1-info deposit's selector and every deposit's source hash of block `n`, each
/// checked to have succeeded.
fn opening(node: &Node, n: u64) -> ([u8; 4], Vec<B256>) {
    let block = block(node, n);
    assert!(block.txs.iter().all(|t| t.receipt.status.coerce_status()), "block {n}: every transaction succeeds");
    let selector = block.txs[0].tx.input()[..4].try_into().unwrap();
    let deposits = block.txs.iter().skip(1).filter_map(|t| match &t.tx {
        OpTx::Deposit(d) => Some(d.source_hash),
        OpTx::Eth(_) => None,
    });
    (selector, deposits.collect())
}

fn source_hashes(forks: &[OpSpecId]) -> Vec<B256> {
    forks.iter().flat_map(|&f| upgrades::deposits(f)).map(|d| d.source_hash).collect()
}

/// A signed transfer of 1 wei from `key` with 200 bytes of data (an L1 fee to pay).
fn transfer(key: &PrivateKeySigner, nonce: u64) -> Bytes {
    let tx = TxEip1559 {
        chain_id: 8453,
        nonce,
        gas_limit: 60_000,
        max_fee_per_gas: 100_000_000_000,
        max_priority_fee_per_gas: 1_000_000,
        to: TxKind::Call(Address::repeat_byte(0xbe)),
        value: U256::from(1),
        input: Bytes::from(vec![0x5a; 200]),
        ..Default::default()
    };
    let sig = key.sign_hash_sync(&tx.signature_hash()).unwrap();
    Bytes::from(TxEnvelope::from(tx.into_signed(sig)).encoded_2718())
}

fn fund(node: &Node, address: Address) {
    let edit = AccountEdit { balance: Some(Balance::Set(U256::from(10 * ETHER))), ..AccountEdit::new(address) };
    node.dev().unwrap().edit(vec![edit]).unwrap();
}

const SELECTOR_BEDROCK: [u8; 4] = [0x01, 0x5d, 0x8e, 0xb9];
const SELECTOR_ECOTONE: [u8; 4] = [0x44, 0x0a, 0x5e, 0x20];
const SELECTOR_ISTHMUS: [u8; 4] = [0x09, 0x89, 0x99, 0xbe];
const SELECTOR_JOVIAN: [u8; 4] = [0x3d, 0xb6, 0xbe, 0x2b];

/// Base's genesis on a current clock: block 1 is the first block of every fork at once. It
/// opens with Bedrock's L1-info deposit and Ecotone's, Fjord's, Isthmus's and Jovian's
/// upgrade transactions, after which the proxies point at Jovian's implementations (whose
/// code hashes are the specs'), the oracle has every flag, and EIP-4788's and EIP-2935's
/// contracts exist. Block 2 opens with Jovian's deposit, and a transfer pays Jovian's fees.
#[test]
fn base_genesis_builds_on_its_own_clock_through_every_fork_in_block_1() {
    let (genesis, config) = base();
    let jovian = config.forks.jovian_time.expect("Base schedules Jovian");
    let (node, path) = open("base", genesis, &config);
    let key = PrivateKeySigner::from_bytes(&keccak256("upgrades test key")).unwrap();
    fund(&node, key.address());
    let transfer_hash = node.api().submit.submit_raw(transfer(&key, 0)).unwrap();

    let dev = node.dev().unwrap();
    assert_eq!(dev.mine(1, None, None).unwrap(), 1..2);
    let one = block(&node, 1);
    assert!(one.header.timestamp >= jovian, "the clock is past Base's Jovian");
    let (selector, deposits) = opening(&node, 1);
    assert_eq!(selector, SELECTOR_BEDROCK, "every fork's first block: the genesis L1Block's format");
    let all = [OpSpecId::ECOTONE, OpSpecId::FJORD, OpSpecId::ISTHMUS, OpSpecId::JOVIAN];
    assert_eq!(deposits, source_hashes(&all));
    // The first and last of them, as the specs and op-node name them.
    assert_eq!(deposits[0], b256!("877a6077205782ea15a6dc8699fa5ebcec5e0f4389f09cb8eda09488231346f8"));
    assert_eq!(deposits[21], b256!("e836db6a959371756f8941be3e962d000f7e12a32e49e2c9ca42ba177a92716c"));
    assert_eq!(one.txs.len(), 23, "no pool transaction in an upgrade block");

    // Jovian's implementations behind the proxies, Isthmus's vault behind its own.
    let l1_block = address!("3Ba4007f5C922FBb33C454B41ea7a1f11E83df2C");
    let oracle = address!("4f1db3c6AbD250ba86E0928471A8F7DB3AFd88F1");
    let vault = address!("4fa2Be8cd41504037F1838BcE3bCC93bC68Ff537");
    assert_eq!(implementation(&node, L1_BLOCK, 1), l1_block);
    assert_eq!(implementation(&node, GAS_PRICE_ORACLE, 1), oracle);
    assert_eq!(implementation(&node, OPERATOR_FEE_VAULT, 1), vault);
    let code_hashes = [
        (l1_block, b256!("5f885ca815d2cf27a203123e50b8ae204fdca910b6995d90b2d7700cbb9240d1")),
        (oracle, b256!("e9fc7c96c4db0d6078e3d359d7e8c982c350a513cb2c31121adf5e1e8a446614")),
        (vault, b256!("57dc55c9c09ca456fa728f253fe7b895d3e6aae0706104935fe87c7721001971")),
        // Those the earlier forks deployed on the way: Ecotone's, Fjord's, Isthmus's.
        (address!("07dbe8500fc591d1852B76feE44d5a05e13097Ff"), preconf_op::dev::L1_BLOCK_CODE_HASH),
        (
            address!("b528D11cC114E026F138fE568744c6D45ce6Da7A"),
            b256!("8b71360ea773b4cfaf1ae6d2bd15464a4e1e2e360f786e475f63aeaed8da0ae5"),
        ),
        (
            address!("a919894851548179A0750865e7974DA599C0Fac7"),
            b256!("a88fa50a2745b15e6794247614b5298483070661adacb8d32d716434ed24c6b2"),
        ),
        (address!("ff256497d61dcd71a9e9ff43967c13fde1f72d12"), preconf_op::dev::L1_BLOCK_ISTHMUS_CODE_HASH),
        (address!("93e57a196454cb919193fa9946f14943cf733845"), preconf_op::dev::GAS_PRICE_ORACLE_ISTHMUS_CODE_HASH),
    ];
    for (address, hash) in code_hashes {
        assert_eq!(code_hash(&node, address, 1), hash, "code at {address}");
    }
    for fork in ["Ecotone", "Fjord", "Isthmus", "Jovian"] {
        assert!(oracle_flag(&node, fork, 1), "is{fork}()");
        assert!(!oracle_flag(&node, fork, 0), "not is{fork}() at genesis");
    }
    let code = |address| node.api().state.code(address, BlockId::Number(1)).unwrap();
    assert_eq!(code(alloy_eips::eip4788::BEACON_ROOTS_ADDRESS), alloy_eips::eip4788::BEACON_ROOTS_CODE);
    assert_eq!(code(alloy_eips::eip2935::HISTORY_STORAGE_ADDRESS), alloy_eips::eip2935::HISTORY_STORAGE_CODE);

    // Block 2: Jovian's deposit into Jovian's L1Block, then the transfer held back from block 1.
    let before = node.api().state.balance(key.address(), BlockId::Number(1)).unwrap();
    assert_eq!(dev.mine(1, None, None).unwrap(), 2..3);
    let (selector, deposits) = opening(&node, 2);
    assert_eq!((selector, deposits.len()), (SELECTOR_JOVIAN, 0));
    let two = block(&node, 2);
    assert_eq!(two.txs.len(), 2);
    let sent = &two.txs[1];
    assert_eq!(sent.hash(), transfer_hash);
    // The EIP-2935 contract holds block 1's hash (its system call ran at block 2's start).
    let history_slot = B256::from(U256::from(1));
    assert_eq!(storage(&node, alloy_eips::eip2935::HISTORY_STORAGE_ADDRESS, history_slot, 2), one.hash.unwrap());

    let l1 = L1Info::from_calldata(two.txs[0].tx.input()).unwrap();
    let raw = sent.tx.encoded_2718();
    let fields = receipt_fields(&l1.fees_for(OpSpecId::JOVIAN), &raw, OpSpecId::JOVIAN);
    assert_eq!(fields.da_footprint_gas_scalar, Some(400), "Jovian's default DA footprint scalar");
    assert!(fields.da_footprint.is_some_and(|f| f > 0));
    assert_eq!(two.header.blob_gas_used, fields.da_footprint, "the block's DA footprint is the transfer's");
    assert_eq!(fields.l1_base_fee_scalar, Some(U256::from(2269)));
    assert!(fields.l1_fee > U256::ZERO);
    // What the sender paid: value, gas at the block's price, and that L1 fee.
    let base_fee = two.header.base_fee_per_gas.unwrap() as u128;
    let price = sent.tx.effective_gas_price(Some(base_fee as u64));
    let after = node.api().state.balance(key.address(), BlockId::Number(2)).unwrap();
    assert_eq!(before - after, U256::from(1 + sent.gas_used as u128 * price) + fields.l1_fee);
    let _ = std::fs::remove_file(path);
}

/// Forks one per block after a genesis with proxies (Base's, its schedule moved): each first
/// block carries its fork's upgrades after the previous fork's L1-info format, and the
/// chain ends on Jovian's format with a transfer that pays Jovian's fees.
#[test]
fn forks_one_per_block_after_a_genesis_with_proxies() {
    let (genesis, mut config) = base();
    let t = u64::from_str_radix(genesis["timestamp"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let f = &mut config.forks;
    f.canyon_time = Some(t + 2); // block 1
    (f.delta_time, f.ecotone_time) = (Some(t + 4), Some(t + 4)); // block 2
    f.fjord_time = Some(t + 6); // block 3
    (f.granite_time, f.holocene_time) = (Some(t + 8), Some(t + 8)); // block 4
    f.isthmus_time = Some(t + 10); // block 5
    f.jovian_time = Some(t + 12); // block 6
    let (node, path) = open("staggered", genesis, &config);
    let dev = node.dev().unwrap();
    let key = PrivateKeySigner::from_bytes(&keccak256("upgrades test key")).unwrap();
    let (e, fj, i, j) = (OpSpecId::ECOTONE, OpSpecId::FJORD, OpSpecId::ISTHMUS, OpSpecId::JOVIAN);
    let expected: [([u8; 4], &[OpSpecId]); 7] = [
        (SELECTOR_BEDROCK, &[]),
        (SELECTOR_BEDROCK, &[e]),
        (SELECTOR_ECOTONE, &[fj]),
        (SELECTOR_ECOTONE, &[]),
        (SELECTOR_ECOTONE, &[i]),
        (SELECTOR_ISTHMUS, &[j]),
        (SELECTOR_JOVIAN, &[]),
    ];
    for (n, (selector, forks)) in (1u64..).zip(expected) {
        // Block 7 already holds the transfer (executed as it opened, at the clock's time).
        if n < 7 {
            dev.set_next_timestamp(t + 2 * n).unwrap();
        }
        if n == 6 {
            // Sent in Jovian's first block, included only after it.
            fund(&node, key.address());
            node.api().submit.submit_raw(transfer(&key, 0)).unwrap();
        }
        assert_eq!(dev.mine(1, None, None).unwrap(), n..n + 1);
        assert!(n == 7 || block(&node, n).header.timestamp == t + 2 * n);
        assert_eq!(opening(&node, n), (selector, source_hashes(forks)), "block {n}");
    }
    assert_eq!(
        code_hash(&node, preconf_op::canyon::CREATE2_DEPLOYER, 1),
        preconf_op::canyon::CREATE2_DEPLOYER_CODE_HASH
    );
    assert!(oracle_flag(&node, "Ecotone", 2) && !oracle_flag(&node, "Fjord", 2));
    assert!(oracle_flag(&node, "Fjord", 3) && !oracle_flag(&node, "Isthmus", 3));
    assert!(oracle_flag(&node, "Isthmus", 5) && !oracle_flag(&node, "Jovian", 5));
    assert!(oracle_flag(&node, "Jovian", 6));
    assert_eq!(block(&node, 6).txs.len(), 6, "Jovian's first block holds back the transfer");
    let seven = block(&node, 7);
    assert_eq!(seven.txs.len(), 2);
    let l1 = L1Info::from_calldata(seven.txs[0].tx.input()).unwrap();
    let fields = receipt_fields(&l1.fees_for(j), &seven.txs[1].tx.encoded_2718(), j);
    assert_eq!(fields.da_footprint_gas_scalar, Some(400));
    assert_eq!(seven.header.blob_gas_used, fields.da_footprint);
    let _ = std::fs::remove_file(path);
}

/// A genesis whose predeploys are not proxies (the OP dev chain's, its code at the
/// predeploys themselves) cannot take a fork still to come: refused, naming the fork and
/// the predeploy. With every fork active from genesis it needs no upgrade and is built.
#[test]
fn a_genesis_without_proxies_is_refused_only_when_a_fork_would_upgrade_them() {
    use preconf_chain::genesis::dev_genesis;
    use preconf_op::dev::{dev_config_for, optimism_genesis_for, DevChain, DevHardfork};
    let mut genesis = serde_json::to_value(dev_genesis()).unwrap();
    optimism_genesis_for(&mut genesis, DevChain { hardfork: DevHardfork::Isthmus, min_base_fee: 0 }).unwrap();
    let mut config = dev_config_for(genesis["config"]["chainId"].as_u64().unwrap(), DevHardfork::Isthmus);
    let node = |config: &OpConfig| {
        let mut genesis = genesis.clone();
        genesis["config"] = config.genesis_config();
        Node::open(ChainConfig { genesis: Some(genesis.to_string()), ..Default::default() })
    };
    assert!(node(&config).is_ok(), "Isthmus from genesis, no Jovian");
    config.forks.jovian_time = Some(u64::from(u32::MAX));
    let refused = node(&config).err().expect("refused");
    let message = refused.to_string();
    assert!(message.contains("jovian is still to come"), "{message}");
    assert!(message.contains(&L1_BLOCK.to_string()), "{message}");
    assert!(message.contains("--no-build"), "{message}");
}

/// Automine (`evm_setAutomine(true)`) seals at a tick only a block that holds something; a
/// fork's first block takes no pool transaction, so it is sealed as it is, and the
/// transaction sent meanwhile lands in the next block.
#[test]
fn automine_seals_a_forks_first_block_and_the_waiting_transaction_lands_next() {
    let (mut genesis, config) = base();
    let key = PrivateKeySigner::from_bytes(&keccak256("upgrades test key")).unwrap();
    genesis["alloc"][key.address().to_string()] = serde_json::json!({ "balance": "0x8ac7230489e80000" });
    let (node, path) = open("automine", genesis, &config);
    node.dev().unwrap().set_mining(Mining::Auto).unwrap();
    let hash = node.api().submit.submit_raw(transfer(&key, 0)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while node.chain().view().head.header.number < 2 {
        assert!(Instant::now() < deadline, "block 1 (every fork's first) and 2 sealed by automine");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(block(&node, 1).txs.len(), 23);
    assert_eq!(block(&node, 2).txs[1].hash(), hash);
    let _ = std::fs::remove_file(path);
}

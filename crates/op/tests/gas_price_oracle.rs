//! The OP dev chain's GasPriceOracle: its code is what the Fjord deployment code (the OP
//! specs' copy, crates/op/src/upgrades/fjord-gas-price-oracle-deployment.txt) creates, and after the block's L1-info
//! deposit an eth_call of `getL1Fee(bytes)` on the unsigned transaction (what viem's
//! `estimateL1Fee` sends) gives the L1 fee op-revm charges the signed one; `l1BaseFee()`
//! (viem's `getL1BaseFee`) gives the deposit's L1 base fee.

use alloy_consensus::{SignableTransaction, TxEip1559};
use alloy_primitives::{address, keccak256, Address, Bytes, TxKind, B256, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use op_revm::{DefaultOp, L1BlockInfo, OpBuilder, OpSpecId};
use preconf_op::block::OpBlockBuilder;
use preconf_op::dev::{self, gas_price_oracle_code, DevL1Values, GAS_PRICE_ORACLE};
use preconf_op::l1info::{receipt_fields, L1Info};
use preconf_op::{OpTx, TxDeposit};
use revm::context::result::{ExecutionResult, Output};
use revm::context::{BlockEnv, CfgEnv, Context};
use revm::database::{CacheDB, EmptyDB};
use revm::database_interface::{DBErrorMarker, DatabaseRef};
use revm::handler::{ExecuteCommitEvm, ExecuteEvm};

use crate::support::{attributes, dev_genesis, ETH};

const DEPLOYMENT: &str = include_str!("../src/upgrades/fjord-gas-price-oracle-deployment.txt");
const BOB: Address = address!("000000000000000000000000000000000000b0b0");

/// A deposit from `from`: runs without fees or signature, and its output is kept.
fn deposit(from: Address, to: TxKind, gas_limit: u64, input: Bytes) -> OpTx {
    OpTx::Deposit(TxDeposit {
        source_hash: keccak256(&input),
        from,
        to,
        mint: 0,
        value: U256::ZERO,
        gas_limit,
        is_system_transaction: false,
        input,
    })
}

/// Runs `txs` on `db` under Fjord's rules at timestamp 2, committing all but the last,
/// whose result is returned (an eth_call after the others).
fn run<DB: DatabaseRef<Error: DBErrorMarker + std::fmt::Debug>>(
    db: DB,
    txs: &[OpTx],
) -> ExecutionResult<op_revm::OpHaltReason> {
    let block = BlockEnv {
        number: U256::from(1),
        timestamp: U256::from(2),
        gas_limit: 30_000_000,
        basefee: 0,
        prevrandao: Some(B256::ZERO),
        blob_excess_gas_and_price: Some(revm::context_interface::block::BlobExcessGasAndPrice::new(
            0,
            alloy_eips::eip4844::BLOB_GASPRICE_UPDATE_FRACTION as u64,
        )),
        ..Default::default()
    };
    let mut cfg = CfgEnv::new_with_spec(OpSpecId::FJORD);
    cfg.chain_id = 901;
    let ctx =
        Context::op().with_db(CacheDB::new(db)).with_block(block).with_cfg(cfg).with_chain(L1BlockInfo::default());
    let mut evm = ctx.build_op();
    let (last, before) = txs.split_last().unwrap();
    for tx in before {
        let sender = tx.sender().unwrap();
        evm.transact_commit(tx.to_op_env(sender)).unwrap();
    }
    evm.transact(last.to_op_env(last.sender().unwrap())).unwrap().result
}

fn output(result: ExecutionResult<op_revm::OpHaltReason>) -> Bytes {
    match result {
        ExecutionResult::Success { output: Output::Call(out), .. } => out,
        other => panic!("the call failed: {other:?}"),
    }
}

fn selector(signature: &str) -> Vec<u8> {
    keccak256(signature)[..4].to_vec()
}

#[test]
fn embedded_code_is_what_the_fjord_deployment_creates() {
    let init: Bytes = DEPLOYMENT.trim().parse().unwrap();
    // op-node's Fjord upgrade: a deposit from 0x4210…0002 (nonce 0) creating the oracle.
    let deployer = address!("4210000000000000000000000000000000000002");
    let result = run(EmptyDB::default(), &[deposit(deployer, TxKind::Create, 1_450_000, init)]);
    let ExecutionResult::Success { output: Output::Create(code, Some(at)), .. } = result else {
        panic!("the deployment failed: {result:?}")
    };
    assert_eq!(at, address!("a919894851548179A0750865e7974DA599C0Fac7"), "the address the OP specs give");
    assert_eq!(code, gas_price_oracle_code());
}

#[test]
fn get_l1_fee_agrees_with_op_revm() {
    let signer = PrivateKeySigner::random();
    let (genesis, state, parent) =
        dev_genesis(serde_json::json!({ signer.address().to_string(): { "balance": format!("{:#x}", 10 * ETH) } }));
    let config = preconf_op::OpConfig::from_genesis_config(&genesis["config"]).unwrap().unwrap();
    let l1 = DevL1Values::default();
    let l1_info = OpTx::Deposit(l1.l1_info_deposit(0));

    // op-revm's charge for a signed transfer, in a block of the dev chain.
    let mut block = OpBlockBuilder::open(&config, &parent, &attributes(2), &state).unwrap();
    block.push(l1_info.clone()).unwrap();
    let tx = TxEip1559 {
        chain_id: 901,
        nonce: 0,
        gas_limit: 21_000,
        max_fee_per_gas: 2 * block.base_fee() as u128,
        max_priority_fee_per_gas: 1_000,
        to: TxKind::Call(BOB),
        value: U256::from(ETH),
        ..Default::default()
    };
    let unsigned = tx.encoded_for_signing();
    let signature = signer.sign_hash_sync(&tx.signature_hash()).unwrap();
    let signed = alloy_consensus::TxEnvelope::Eip1559(tx.into_signed(signature));
    let raw = alloy_eips::eip2718::Encodable2718::encoded_2718(&signed);
    block.push(OpTx::Eth(signed)).unwrap();
    let charged = block.account(dev::L1_FEE_VAULT).unwrap().unwrap().balance;
    let fees = L1Info::from_calldata(&l1.ecotone_calldata(0)).unwrap().fees_for(block.spec());
    assert_eq!(charged, receipt_fields(&fees, &raw, block.spec()).l1_fee);
    assert!(charged > U256::ZERO);

    // The oracle, called after the same L1-info deposit.
    let call = |input: Vec<u8>| {
        let out = output(run(
            &state,
            &[l1_info.clone(), deposit(BOB, TxKind::Call(GAS_PRICE_ORACLE), 1_000_000, input.into())],
        ));
        U256::from_be_slice(&out[..32])
    };
    assert_eq!(call(selector("isEcotone()")), U256::from(1));
    assert_eq!(call(selector("isFjord()")), U256::from(1));
    assert_eq!(call(selector("l1BaseFee()")), l1.base_fee);
    // getL1Fee(bytes): the offset, the length, the bytes padded to a word.
    let mut input = selector("getL1Fee(bytes)");
    input.extend_from_slice(&U256::from(32).to_be_bytes::<32>());
    input.extend_from_slice(&U256::from(unsigned.len()).to_be_bytes::<32>());
    input.extend_from_slice(&unsigned);
    input.resize(4 + 64 + unsigned.len().div_ceil(32) * 32, 0);
    assert_eq!(call(input), charged);
}

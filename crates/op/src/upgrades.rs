//! The network upgrade transactions op-node's derivation puts in a fork's activation block,
//! after the L1-info deposit and the block's user deposits: deposits that deploy the fork's
//! new predeploy implementations from fixed senders, point the predeploys' proxies at them
//! (`upgradeTo`, sent from the zero address, which the proxies let through), turn the
//! GasPriceOracle's pricing for the fork on, and deploy the contracts the fork's system
//! calls need (EIP-4788's, EIP-2935's). The OP specs' `<fork>/derivation.md` pages name every
//! field; the deployment codes are the specs' files, kept beside this module
//! (test/fixtures/op/README.md names them).

use alloy_primitives::{address, b256, hex, keccak256, Address, Bytes, TxKind, B256, U256};

use crate::deposit::TxDeposit;
use crate::dev::{DEPOSITOR, GAS_PRICE_ORACLE, L1_BLOCK};
use crate::OpSpecId;

/// The OperatorFeeVault predeploy (Isthmus's operator fee goes there).
pub const OPERATOR_FEE_VAULT: Address = address!("420000000000000000000000000000000000001b");

/// ERC-1967's admin slot: every predeploy proxy of an OP genesis names its admin (the
/// ProxyAdmin predeploy) there, implementation or not (Isthmus's OperatorFeeVault proxy
/// had none before Isthmus); a predeploy that is not a proxy has nothing there.
pub const ADMIN_SLOT: B256 = b256!("b53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103");

/// The forks whose activation block carries upgrade deposits, in the order op-node appends
/// them when several activate in one block.
pub const UPGRADE_FORKS: [OpSpecId; 4] = [OpSpecId::ECOTONE, OpSpecId::FJORD, OpSpecId::ISTHMUS, OpSpecId::JOVIAN];

/// The sender of EIP-4788's pre-signed deployment, whose first contract is the beacon-roots
/// contract; Ecotone deploys it from there with a deposit.
pub const EIP4788_DEPLOYER: Address = address!("0B799C86a49DEeb90402691F1041aa3AF2d3C875");
/// The same for EIP-2935's history contract, which Isthmus deploys.
pub const EIP2935_DEPLOYER: Address = address!("3462413Af4609098e1E27A490f554f260213D685");

/// EIP-4788's creation code (a 9-byte constructor returning the runtime code), as the EIP
/// and the specs' Ecotone page give it.
const EIP4788_CREATION: &str = "60618060095f395ff33373fffffffffffffffffffffffffffffffffffffffe14604d57602036146024575f5ffd5b5f35801560495762001fff810690815414603c575f5ffd5b62001fff01545f5260205ff35b5f5ffd5b62001fff42064281555f359062001fff015500";
/// EIP-2935's creation code, as the specs' Isthmus page gives it.
const EIP2935_CREATION: &str = "60538060095f395ff33373fffffffffffffffffffffffffffffffffffffffe14604657602036036042575f35600143038111604257611fff81430311604257611fff9006545f5260205ff35b5f5ffd5b5f35611fff60014303065500";

/// The deployers of the new implementations: `0x4210…00NN`, accounts with no transactions,
/// so each deploys at its nonce-0 address.
const fn deployer(n: u8) -> Address {
    let mut bytes = [0u8; 20];
    (bytes[0], bytes[1], bytes[19]) = (0x42, 0x10, n);
    Address::new(bytes)
}

/// The implementation `deployer`'s upgrade deposit creates (its first contract).
pub fn implementation(deployer: Address) -> Address {
    deployer.create(0)
}

/// The source hash of an upgrade deposit: the upgrade domain's (2), keccak(2 ‖ keccak(intent)).
pub fn source_hash(intent: &str) -> B256 {
    keccak256([U256::from(2u64).to_be_bytes::<32>().as_slice(), keccak256(intent).as_slice()].concat())
}

/// An upgrade deposit as op-node writes them: nothing minted, no value, not a system
/// transaction (Regolith's rules: it uses and pays its gas like any deposit).
fn upgrade(intent: &str, from: Address, to: TxKind, gas_limit: u64, input: Bytes) -> TxDeposit {
    TxDeposit {
        source_hash: source_hash(intent),
        from,
        to,
        mint: 0,
        value: U256::ZERO,
        gas_limit,
        is_system_transaction: false,
        input,
    }
}

fn code(hex_text: &str) -> Bytes {
    hex::decode(hex_text.trim()).expect("the embedded deployment code is hex").into()
}

fn deploy(intent: &str, from: Address, gas_limit: u64, code_hex: &str) -> TxDeposit {
    upgrade(intent, from, TxKind::Create, gas_limit, code(code_hex))
}

/// `upgradeTo(implementation)` on `proxy`, the implementation being `deployer`'s first contract.
fn upgrade_to(intent: &str, proxy: Address, deployer: Address) -> TxDeposit {
    let mut input = keccak256("upgradeTo(address)")[..4].to_vec();
    input.extend_from_slice(implementation(deployer).into_word().as_slice());
    upgrade(intent, Address::ZERO, TxKind::Call(proxy), 50_000, input.into())
}

/// The GasPriceOracle's `set<Fork>()`, which only the depositor may call.
fn enable(intent: &str, signature: &str, gas_limit: u64) -> TxDeposit {
    let input = Bytes::copy_from_slice(&keccak256(signature)[..4]);
    upgrade(intent, DEPOSITOR, TxKind::Call(GAS_PRICE_ORACLE), gas_limit, input)
}

/// Ecotone: L1Block and GasPriceOracle for the blob-fee parameters, `setEcotone()`, and the
/// beacon-roots contract.
fn ecotone() -> Vec<TxDeposit> {
    let (l1_block, oracle) = (deployer(0), deployer(1));
    vec![
        deploy(
            "Ecotone: L1 Block Deployment",
            l1_block,
            375_000,
            include_str!("upgrades/ecotone-l1-block-deployment.txt"),
        ),
        deploy(
            "Ecotone: Gas Price Oracle Deployment",
            oracle,
            1_000_000,
            include_str!("upgrades/ecotone-gas-price-oracle-deployment.txt"),
        ),
        upgrade_to("Ecotone: L1 Block Proxy Update", L1_BLOCK, l1_block),
        upgrade_to("Ecotone: Gas Price Oracle Proxy Update", GAS_PRICE_ORACLE, oracle),
        enable("Ecotone: Gas Price Oracle Set Ecotone", "setEcotone()", 80_000),
        deploy("Ecotone: beacon block roots contract deployment", EIP4788_DEPLOYER, 250_000, EIP4788_CREATION),
    ]
}

/// Fjord: the GasPriceOracle with the FastLZ estimate, and `setFjord()`.
fn fjord() -> Vec<TxDeposit> {
    let oracle = deployer(2);
    vec![
        deploy(
            "Fjord: Gas Price Oracle Deployment",
            oracle,
            1_450_000,
            include_str!("upgrades/fjord-gas-price-oracle-deployment.txt"),
        ),
        upgrade_to("Fjord: Gas Price Oracle Proxy Update", GAS_PRICE_ORACLE, oracle),
        enable("Fjord: Gas Price Oracle Set Fjord", "setFjord()", 90_000),
    ]
}

/// Isthmus: L1Block, GasPriceOracle and OperatorFeeVault for the operator fee,
/// `setIsthmus()`, and the block-hash history contract.
fn isthmus() -> Vec<TxDeposit> {
    let (l1_block, oracle, vault) = (deployer(3), deployer(4), deployer(5));
    vec![
        deploy(
            "Isthmus: L1 Block Deployment",
            l1_block,
            425_000,
            include_str!("upgrades/isthmus-l1-block-deployment.txt"),
        ),
        deploy(
            "Isthmus: Gas Price Oracle Deployment",
            oracle,
            1_625_000,
            include_str!("upgrades/isthmus-gas-price-oracle-deployment.txt"),
        ),
        deploy(
            "Isthmus: Operator Fee Vault Deployment",
            vault,
            500_000,
            include_str!("upgrades/isthmus-operator-fee-deployment.txt"),
        ),
        upgrade_to("Isthmus: L1 Block Proxy Update", L1_BLOCK, l1_block),
        upgrade_to("Isthmus: Gas Price Oracle Proxy Update", GAS_PRICE_ORACLE, oracle),
        upgrade_to("Isthmus: Operator Fee Vault Proxy Update", OPERATOR_FEE_VAULT, vault),
        enable("Isthmus: Gas Price Oracle Set Isthmus", "setIsthmus()", 90_000),
        deploy("Isthmus: EIP-2935 Contract Deployment", EIP2935_DEPLOYER, 250_000, EIP2935_CREATION),
    ]
}

/// Jovian: L1Block for the DA footprint scalar, the GasPriceOracle with Jovian's operator
/// fee, and `setJovian()`. The intents are op-node's (the specs' Jovian page spells two of
/// them "L1Block"/"GasPriceOracle"; op-node, kona and op-reth hash "L1 Block"/"Gas Price
/// Oracle", and the chains that ran Jovian hold those hashes).
fn jovian() -> Vec<TxDeposit> {
    let (l1_block, oracle) = (deployer(6), deployer(7));
    vec![
        deploy(
            "Jovian: L1 Block Deployment",
            l1_block,
            447_315,
            include_str!("upgrades/jovian-l1-block-deployment.txt"),
        ),
        upgrade_to("Jovian: L1 Block Proxy Update", L1_BLOCK, l1_block),
        deploy(
            "Jovian: Gas Price Oracle Deployment",
            oracle,
            1_750_714,
            include_str!("upgrades/jovian-gas-price-oracle-deployment.txt"),
        ),
        upgrade_to("Jovian: Gas Price Oracle Proxy Update", GAS_PRICE_ORACLE, oracle),
        enable("Jovian: Gas Price Oracle Set Jovian", "setJovian()", 90_000),
    ]
}

/// `fork`'s upgrade deposits in op-node's order; none for a fork without any.
pub fn deposits(fork: OpSpecId) -> Vec<TxDeposit> {
    match fork {
        OpSpecId::ECOTONE => ecotone(),
        OpSpecId::FJORD => fjord(),
        OpSpecId::ISTHMUS => isthmus(),
        OpSpecId::JOVIAN => jovian(),
        _ => Vec::new(),
    }
}

/// The predeploys `fork`'s deposits give a new implementation behind their proxy.
pub fn proxied(fork: OpSpecId) -> &'static [Address] {
    match fork {
        OpSpecId::ECOTONE | OpSpecId::JOVIAN => &[L1_BLOCK, GAS_PRICE_ORACLE],
        OpSpecId::FJORD => &[GAS_PRICE_ORACLE],
        OpSpecId::ISTHMUS => &[L1_BLOCK, GAS_PRICE_ORACLE, OPERATOR_FEE_VAULT],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every source hash is the one the specs (Ecotone, Fjord, Isthmus) or op-node's and
    /// kona's tests (Jovian) give.
    #[test]
    fn source_hashes_are_the_named_ones() {
        let named: [(OpSpecId, &[&str]); 4] = [
            (
                OpSpecId::ECOTONE,
                &[
                    "877a6077205782ea15a6dc8699fa5ebcec5e0f4389f09cb8eda09488231346f8",
                    "a312b4510adf943510f05fcc8f15f86995a5066bd83ce11384688ae20e6ecf42",
                    "18acb38c5ff1c238a7460ebc1b421fa49ec4874bdf1e0a530d234104e5e67dbc",
                    "ee4f9385eceef498af0be7ec5862229f426dec41c8d42397c7257a5117d9230a",
                    "0c1cb38e99dbc9cbfab3bb80863380b0905290b37eb3d6ab18dc01c1f3e75f93",
                    "69b763c48478b9dc2f65ada09b3d92133ec592ea715ec65ad6e7f3dc519dc00c",
                ],
            ),
            (
                OpSpecId::FJORD,
                &[
                    "86122c533fdcb89b16d8713174625e44578a89751d96c098ec19ab40a51a8ea3",
                    "1e6bb0c28bfab3dc9b36ffb0f721f00d6937f33577606325692db0965a7d58c6",
                    "bac7bb0d5961cad209a345408b0280a0d4686b1b20665e1b0f9cdafd73b19b6b",
                ],
            ),
            (
                OpSpecId::ISTHMUS,
                &[
                    "3b2d0821ca2411ad5cd3595804d1213d15737188ae4cbd58aa19c821a6c211bf",
                    "fc70b48424763fa3fab9844253b4f8d508f91eb1f7cb11a247c9baec0afb8035",
                    "107a570d3db75e6110817eb024f09f3172657e920634111ce9875d08a16daa96",
                    "ebe8b5cb10ca47e0d8bda8f5355f2d66711a54ddeb0ef1d30e29418c9bf17a0e",
                    "ecf2d9161d26c54eda6b7bfdd9142719b1e1199a6e5641468d1bf705bc531ab0",
                    "ad74e1adb877ccbe176b8fa1cc559388a16e090ddbe8b512f5b37d07d887a927",
                    "3ddf4b1302548dd92939826e970f260ba36167f4c25f18390a5e8b194b295319",
                    "bfb734dae514c5974ddf803e54c1bc43d5cdb4a48ae27e1d9b875a5a150b553a",
                ],
            ),
            (
                OpSpecId::JOVIAN,
                &[
                    "bb1a656f65401240fac3db12e7a79ebb954b11e62f7626eb11691539b798d3bf",
                    "f3275f829340521028f9ad5bce4ecb1c64a45d448794effa2a77674627338e76",
                    "239b7021a6c2cf3a918481242bbb5a9499057f24501539467536c691bb133962",
                    "a70c60aa53b8c1c0d52b39b1e901e7d7c09f7819595cb24048a6bb1983b401ff",
                    "e836db6a959371756f8941be3e962d000f7e12a32e49e2c9ca42ba177a92716c",
                ],
            ),
        ];
        for (fork, hashes) in named {
            let got: Vec<B256> = deposits(fork).iter().map(|d| d.source_hash).collect();
            let want: Vec<B256> = hashes.iter().map(|h| h.parse().unwrap()).collect();
            assert_eq!(got, want, "{fork:?}");
        }
    }

    /// The whole transactions, byte for byte: their hashes are those of the encodings kona's
    /// tests hold for op-node's Ecotone, Fjord and Isthmus upgrade transactions (op-rs/kona @
    /// `cdb9be24`, crates/protocol/hardforks/src/bytecode/<fork>_tx_<n>.hex).
    #[test]
    fn the_transactions_are_op_nodes() {
        let named: [(OpSpecId, &[&str]); 3] = [
            (
                OpSpecId::ECOTONE,
                &[
                    "50549bed9a83ba7238893970780b458ed3d543f299d6f69f7a5d0b32d7cd71a7",
                    "f8e8dd83c100c9eb137fa372cdda2cf854f79b6e8cfc604c5e54d970c05cb6dc",
                    "9f2b2d34dfa2cb55cceb9860cade0cb03cfbd7ff1dd07d48b4708b29a46b4a24",
                    "edbfdad1f44ea830b863eac45eca4408398351b30511826012882059625963d2",
                    "91f762393442ac507c6852211b62445d82c9b58bae34726ecef2f10b4156f027",
                    "5b7915f2a55ce67519e6d8f65248918f4e62f545706af2bf02549bb9782c03f3",
                ],
            ),
            (
                OpSpecId::FJORD,
                &[
                    "aafd55b14e021a2c04628606e42dbe58cc9c86b6ed695a8b9ccf258e28963e5e",
                    "2f63bbe08a66796dde569281a58a53e0b0f64b7aa067297e9c70455fb8e375bc",
                    "7cedc4f1c428928cdfb9b340bda3060102c71ad23f982678471b222ba8a756e1",
                ],
            ),
            (
                OpSpecId::ISTHMUS,
                &[
                    "4557f1142fedd52d571b070a290aa8683a03f7aac7929967858af7aab48cd4cc",
                    "9412bd3fa72eb1dbec94fd2297d44a8b86cb1f55966324e6cc7d57decc92c1f6",
                    "a9e6286eadd53ecf7bb2bff668c4fcb62305a8b3e4b584c30f7d4f90046ee75e",
                    "e992e00998b34075506d2726a274db07a62af6cdd9d527bfda9128114603cfbd",
                    "b6560306ccb0e772b132a8a6dd78244c0d7ac270c80baba40f95006184926c30",
                    "f162acc8ebbaf9237755736b62331a4817fe27bbbe3712f473ecfa8fee499f7c",
                    "bf2fef09f73279373fce8acd2968ca4fd1d10ba88bf10993b6a69c33d913f01b",
                    "f3ddde30514a8d00b0b92f14b9ce6b3170ea30f5f45b1afdc0905801134ffefe",
                ],
            ),
        ];
        for (fork, hashes) in named {
            let got: Vec<B256> = deposits(fork).iter().map(|d| d.hash()).collect();
            let want: Vec<B256> = hashes.iter().map(|h| h.parse().unwrap()).collect();
            assert_eq!(got, want, "{fork:?}");
        }
    }

    /// The implementations land where the specs say, and the proxies are told so.
    #[test]
    fn implementations_are_at_the_named_addresses() {
        let named = [
            (0, address!("07dbe8500fc591d1852B76feE44d5a05e13097Ff")),
            (1, address!("b528D11cC114E026F138fE568744c6D45ce6Da7A")),
            (2, address!("a919894851548179A0750865e7974DA599C0Fac7")),
            (6, address!("3Ba4007f5C922FBb33C454B41ea7a1f11E83df2C")),
            (7, address!("4f1db3c6AbD250ba86E0928471A8F7DB3AFd88F1")),
        ];
        for (n, address) in named {
            assert_eq!(implementation(deployer(n)), address);
        }
        let jovian = deposits(OpSpecId::JOVIAN);
        assert_eq!(
            jovian[1].input.to_string(),
            "0x3659cfe60000000000000000000000003ba4007f5c922fbb33c454b41ea7a1f11e83df2c"
        );
        assert_eq!(jovian[4].input.to_string(), "0xb3d72079", "setJovian()");
        assert_eq!(implementation(EIP4788_DEPLOYER), alloy_eips::eip4788::BEACON_ROOTS_ADDRESS);
        assert_eq!(implementation(EIP2935_DEPLOYER), alloy_eips::eip2935::HISTORY_STORAGE_ADDRESS);
    }
}

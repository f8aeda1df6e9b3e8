//! Canyon's irregular state change: the first block of Canyon sets the code of the create2
//! deployer at its canonical address (Base could not deploy it there the usual way: a deposit
//! had already used the deployer's nonce). Every OP chain does it, at the first block whose
//! timestamp is at or after `canyonTime` (op-geth's rule names the activation time exactly;
//! with blocks on the 2 s grid, as every chain's Canyon time is, the two are the same block).
//! A chain whose Canyon is at genesis never has such a block: its genesis carries what it needs.

use alloy_primitives::{address, b256, Address, Bytes, B256};
use revm::bytecode::Bytecode;
use revm::database_interface::Database;
use revm::state::{Account, EvmState};
use revm::DatabaseCommit;

pub const CREATE2_DEPLOYER: Address = address!("13b0D85CcB8bf860b6b79AF3029fCA081AE9beF2");

/// The deployer's code hash, as op-geth and op-reth name it.
pub const CREATE2_DEPLOYER_CODE_HASH: B256 = b256!("b0550b5b431e30d38000efb7107aaa0ade03d48a7198a140edda9d27134468b2");

/// The deployer's runtime code (1,584 bytes): the bytes the superchain registry keeps under
/// `CREATE2_DEPLOYER_CODE_HASH`, which op-geth loads; the same bytes op-reth embeds.
const CREATE2_DEPLOYER_CODE_HEX: &str = include_str!("create2_deployer_code.hex");

pub fn create2_deployer_code() -> Bytes {
    alloy_primitives::hex::decode(CREATE2_DEPLOYER_CODE_HEX.trim())
        .expect("the embedded create2 deployer code is hex")
        .into()
}

/// Sets the deployer's code on `db`, keeping the account's balance and nonce (the address
/// is funded or nonce-bumped on some chains).
pub fn set_create2_deployer<DB: Database + DatabaseCommit>(db: &mut DB) -> Result<(), DB::Error> {
    let state = create2_deployer_state(db)?;
    db.commit(state);
    Ok(())
}

/// The state change that sets the deployer's code over `db`, not committed: for a block
/// producer that records what its block changed before committing it.
pub fn create2_deployer_state<DB: Database>(db: &mut DB) -> Result<EvmState, DB::Error> {
    let mut info = db.basic(CREATE2_DEPLOYER)?.unwrap_or_default();
    info.code_hash = CREATE2_DEPLOYER_CODE_HASH;
    info.code = Some(Bytecode::new_raw(create2_deployer_code()));
    let mut account = Account::from(info);
    account.mark_touch();
    Ok([(CREATE2_DEPLOYER, account)].into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_code_is_the_named_one() {
        let code = create2_deployer_code();
        assert_eq!(code.len(), 1584);
        assert_eq!(alloy_primitives::keccak256(&code), CREATE2_DEPLOYER_CODE_HASH);
    }
}

//! anvil_dealERC20 and anvil_setERC20Allowance: the token's slot that `balanceOf(account)`
//! or `allowance(owner, spender)` answers from is found against the pending state
//! (exec::answer_slot), then written as anvil_setStorageAt writes it.

use alloy_primitives::{Address, Bytes, U256};
use alloy_rpc_types_eth::TransactionRequest;
use alloy_sol_types::{sol, SolCall};

use crate::chain_state::ChainState;
use crate::error::{ChainResult, DevFailure};
use crate::exec::answer_slot::answer_slot;
use crate::exec::call::CallContext;
use crate::exec::ExecBlock;
use crate::types::BlockId;

sol! {
    function balanceOf(address account) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
}

/// Which of a token's numbers to set.
#[derive(Clone, Copy, Debug)]
pub enum Erc20Entry {
    Balance { account: Address },
    Allowance { owner: Address, spender: Address },
}

impl Erc20Entry {
    fn view_call(self) -> Bytes {
        match self {
            Erc20Entry::Balance { account } => balanceOfCall { account }.abi_encode(),
            Erc20Entry::Allowance { owner, spender } => allowanceCall { owner, spender }.abi_encode(),
        }
        .into()
    }

    fn not_found(self) -> DevFailure {
        match self {
            Erc20Entry::Balance { .. } => DevFailure::NoBalanceSlot,
            Erc20Entry::Allowance { .. } => DevFailure::NoAllowanceSlot,
        }
    }
}

/// The slot of `token` holding `entry`, as the pending state reads it (an unsigned call from
/// the zero address, as anvil makes it).
pub fn slot_of(chain: &ChainState, token: Address, entry: Erc20Entry, amount: U256) -> ChainResult<U256> {
    let view = chain.view();
    let at = view.resolve(BlockId::Pending)?;
    let ctx = CallContext {
        spec: chain.spec(),
        state: view.state(at),
        block: ExecBlock::from_header(&view.context_header(at)?),
        gas_cap: chain.config().gas_cap,
        unpriced_sees_zero_fees: false,
    };
    let tx = TransactionRequest::default().to(token).input(entry.view_call().into());
    answer_slot(&ctx, token, &tx, amount)?.ok_or_else(|| entry.not_found().into())
}

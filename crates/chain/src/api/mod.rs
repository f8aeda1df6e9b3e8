//! The read (and submit) side of the chain, split by concern the way reth's eth API
//! helpers are. Each part is given the shared `ChainState` and the parts it builds on;
//! none of them knows the builder. Results are typed: rendering them is the edge's job.

pub mod blobs;
pub mod blocks;
pub mod execution;
pub mod fees;
pub mod impersonation;
pub mod logs;
pub mod node;
pub mod prefetch;
pub mod proofs;
pub mod state;
pub mod submit;
pub mod tracing;
pub mod transactions;
pub mod txpool;

use std::sync::Arc;

use crate::chain_state::ChainState;
use crate::genesis::DevAccount;

pub struct ChainApi {
    pub state: state::StateReads,
    pub blocks: Arc<blocks::Blocks>,
    pub transactions: transactions::Transactions,
    pub execution: Arc<execution::Execution>,
    pub fees: Arc<fees::Fees>,
    pub logs: logs::Logs,
    pub node: node::NodeReads,
    pub proofs: proofs::Proofs,
    pub submit: Arc<submit::Submission>,
    pub txpool: txpool::TxPool,
    pub tracing: tracing::Tracing,
}

impl ChainApi {
    pub fn new(chain: Arc<ChainState>, dev_accounts: Vec<DevAccount>) -> Self {
        let blocks = Arc::new(blocks::Blocks::new(chain.clone()));
        let execution = Arc::new(execution::Execution::new(chain.clone()));
        let fees = Arc::new(fees::Fees::new(chain.clone(), blocks.clone()));
        Self {
            state: state::StateReads::new(chain.clone()),
            transactions: transactions::Transactions::new(chain.clone(), blocks.clone()),
            txpool: txpool::TxPool::new(chain.clone()),
            logs: logs::Logs::new(chain.clone(), blocks.clone()),
            node: node::NodeReads::new(chain.clone(), fees.clone()),
            proofs: proofs::Proofs::new(chain.clone()),
            tracing: tracing::Tracing::new(chain.clone(), blocks.clone()),
            submit: Arc::new(submit::Submission::new(chain, execution.clone(), fees.clone(), dev_accounts)),
            blocks,
            execution,
            fees,
        }
    }
}

//! preconf-rpc: the JSON edge of the node. Request parameters (validated and made
//! canonical by the TypeScript side) deserialize into alloy's RPC types; the chain's typed
//! results render into geth-shaped JSON text with alloy's RPC types. Nothing in the chain
//! crate builds JSON, and nothing here calls into Node.js: napi-derive only describes the
//! request types for `native/native.d.ts` (see `params`).

pub mod engine;
pub mod engine_payload;
pub mod params;
pub mod render;
pub mod shapes;

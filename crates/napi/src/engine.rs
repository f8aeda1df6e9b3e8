//! The Engine API's boundary: the authenticated port's methods (src/engine/ checks the JWT
//! and the parameters' shapes), each handing canonical JSON to the chain's `Engine` and
//! its typed answer to crates/rpc's renderer. Building a block runs on the submit threads
//! (it executes), and so does getPayload (it may wait for the builder's seal).

use preconf_chain::engine::types::Version;
use preconf_chain::error::EngineError;
use preconf_chain::ChainResult;
use preconf_rpc::engine as render;

use crate::work::Class;
use crate::NativeNode;

fn version(n: u32) -> ChainResult<Version> {
    Version::from_number(n).ok_or_else(|| EngineError::InvalidParams("no such method version").into())
}

fn payload_id(text: &str) -> ChainResult<alloy_primitives::B64> {
    text.parse().map_err(|_| EngineError::InvalidParams("a payload id is 8 bytes of hex").into())
}

work_methods! {
    #[doc = " engine_getPayloadBodiesByHashV1: `hashes` as a JSON array."]
    fn engine_get_payload_bodies_by_hash(hashes: String) on Class::Scans => |n| {
        let hashes = render::hashes(&hashes)?;
        Ok(render::payload_bodies(&preconf_chain::engine::bodies::by_hash(n.chain(), &hashes)?))
    };

    #[doc = " engine_getPayloadBodiesByRangeV1: `start` and `count` as canonical quantities."]
    fn engine_get_payload_bodies_by_range(start: String, count: String) on Class::Scans => |n| {
        let start = preconf_rpc::params::quantity(&start)?;
        let count = preconf_rpc::params::quantity(&count)?;
        Ok(render::payload_bodies(&preconf_chain::engine::bodies::by_range(n.chain(), start, count)?))
    };
}

work_methods! {
    #[doc = " engine_getPayloadV{version}: the envelope of a payload this node built (one the"]
    #[doc = " builder builds from the pool is sealed first, as last pre-confirmed)."]
    fn engine_get_payload(version_number: u32, id: String) on Class::Submit => |n| {
        let v = version(version_number)?;
        let payload = n.engine().get_payload(v, payload_id(&id)?)?;
        Ok(render::payload_envelope(&payload, v))
    };

    #[doc = " engine_forkchoiceUpdatedV{version}: `state` and `attributes` as JSON text; builds the"]
    #[doc = " payload the attributes ask for before answering."]
    fn engine_forkchoice_updated(version_number: u32, state: String, attributes: Option<String>) on Class::Submit => |n| {
        let v = version(version_number)?;
        let state = render::forkchoice_state(&state)?;
        let attributes = attributes.as_deref().map(render::payload_attributes).transpose()?;
        Ok(render::forkchoice_outcome(&n.engine().forkchoice_updated(v, state, attributes)?))
    };
}

work_methods! {
    #[doc = " engine_newPayloadV{version}: the payload as JSON text, V3's versioned hashes (JSON) and"]
    #[doc = " beacon root, V4's execution requests (JSON); executes the block before answering."]
    fn engine_new_payload(version_number: u32, payload: String, versioned_hashes: Option<String>, parent_beacon_block_root: Option<String>, execution_requests: Option<String>) on Class::Submit => |n| {
        let v = version(version_number)?;
        let p = preconf_rpc::engine_payload::new_payload(
            &payload,
            versioned_hashes.as_deref(),
            parent_beacon_block_root.as_deref(),
            execution_requests.as_deref(),
        )?;
        Ok(render::payload_status(&n.engine().new_payload(v, p)?))
    };
}

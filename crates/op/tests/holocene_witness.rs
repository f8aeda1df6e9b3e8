//! The OP Sepolia Holocene blocks (test/fixtures/op/op-sepolia-holocene, from kona's executor
//! test data): each built from its parent header and the payload attributes op-node sent,
//! on a state made of the block's witness alone, must hash to the real block's hash.

use preconf_op::fixture::{block_files, WitnessFixture};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/op/op-sepolia-holocene");

#[test]
fn holocene_blocks_hash_as_op_sepolia() {
    let files = block_files(std::path::Path::new(DIR)).unwrap();
    assert_eq!(files.len(), 8);
    for path in files {
        let fixture = WitnessFixture::load(&path).unwrap();
        let block = fixture.execute().unwrap();
        assert_eq!(block.header.hash_slow(), fixture.expected_hash, "{}", path.display());
    }
}

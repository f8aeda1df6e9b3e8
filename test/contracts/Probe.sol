// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

/// Reports the block context a call runs in, and fails in the ways tests need.
contract Probe {
    error Custom(uint256 code);

    uint256 public counter;

    event Bumped(address indexed by, uint256 value);

    function context() external view returns (uint256 number, uint256 timestamp, uint256 basefee, uint256 chainid) {
        return (block.number, block.timestamp, block.basefee, block.chainid);
    }

    function blockHashOf(uint256 n) external view returns (bytes32) {
        return blockhash(n);
    }

    function bump() external returns (uint256) {
        counter += 1;
        emit Bumped(msg.sender, counter);
        return counter;
    }

    function fail(string calldata reason) external pure {
        revert(reason);
    }

    function failCustom(uint256 code) external pure {
        revert Custom(code);
    }

    function failAssert() external pure {
        assert(false);
    }

    function burn() external pure {
        while (true) {}
    }

    function forward(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "forward failed");
    }
}

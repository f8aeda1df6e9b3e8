// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

/// Passes ETH on, logging around each transfer, so tests can see value transfers and logs
/// in execution order (eth_simulateV1 traceTransfers).
contract Relay {
    event Relayed(address indexed to, uint256 value);

    /// Splits msg.value evenly between `to`, emitting Relayed before each transfer.
    function relay(address payable[] calldata to) external payable {
        uint256 each = msg.value / to.length;
        for (uint256 i = 0; i < to.length; i++) {
            emit Relayed(to[i], each);
            (bool ok, ) = to[i].call{value: each}("");
            require(ok, "relay failed");
        }
    }

    /// Tries to pass msg.value on and keeps it when the recipient refuses it.
    function tryRelay(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        emit Relayed(to, ok ? msg.value : 0);
    }
}

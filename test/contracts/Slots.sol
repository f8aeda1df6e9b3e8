// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

/// Holds 64 storage slots and reads many of them in one call: a fork's cold reads.
contract Slots {
    uint256[64] public values;

    constructor() {
        for (uint256 i = 0; i < 64; i++) {
            values[i] = i * 7 + 1;
        }
    }

    /// The sum of the first `n` slots (each one a cold read on a fresh fork).
    function sum(uint256 n) external view returns (uint256 s) {
        for (uint256 i = 0; i < n; i++) {
            s += values[i];
        }
    }

    function set(uint256 i, uint256 v) external {
        values[i] = v;
    }
}

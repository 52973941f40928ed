// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// The one Multicall3 function the x402 facilitator uses (`tryAggregate`), for its failure diagnostics
/// (balance, token name, nonce state). Placed at Multicall3's canonical address on the test chain; without it,
/// verify failures all degrade to "transaction_simulation_failed".
contract MiniMulticall3 {
    struct Call {
        address target;
        bytes callData;
    }
    struct Result {
        bool success;
        bytes returnData;
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls) external payable returns (Result[] memory out) {
        out = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory data) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) require(ok, "Multicall3: call failed");
            out[i] = Result(ok, data);
        }
    }
}

// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

import "./MiniPermit2.sol";

/// Test-only stand-in for x402's upto Permit2 proxy, with the `settle` entry point, view functions and custom
/// errors of the ABI that the x402 EVM package calls (x402UptoPermit2ProxyABI): only the facilitator named in the signed
/// witness may settle, not before `validAfter`, any amount up to the permitted maximum, paid to the witness's
/// `to`. Written from that ABI and the upto scheme's spec; placed at the proxy's canonical address with
/// anvil_setCode (Permit2's address is a constant, so no constructor needs to run).
contract MiniUptoProxy {
    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    event Settled();

    error AmountExceedsPermitted();
    error InvalidDestination();
    error InvalidOwner();
    error PaymentTooEarly();
    error UnauthorizedFacilitator();

    MiniPermit2 public constant PERMIT2 = MiniPermit2(0x000000000022D473030F116dDEE9F6B43aC78BA3);
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";

    function settle(
        MiniPermit2.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external {
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        PERMIT2.permitWitnessTransferFrom(
            permit,
            MiniPermit2.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
        emit Settled();
    }
}

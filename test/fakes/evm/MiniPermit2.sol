// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// Test-only stand-in for the one Permit2 entry point x402's `upto` scheme uses: signature transfers with a
/// witness (`permitWitnessTransferFrom`), with Permit2's EIP-712 domain ("Permit2", chain id, this address, no
/// version), its type-string construction from the witness type string, unordered nonces in a bitmap, the
/// deadline and the requested-amount check. Written from the published interface; placed at Permit2's
/// canonical address with anvil_setCode. Only 65-byte EOA signatures.
contract MiniPermit2 {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }
    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }
    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    error SignatureExpired(uint256 deadline);
    error InvalidAmount(uint256 maxAmount);
    error InvalidNonce();
    error InvalidSigner();
    error InvalidSignatureLength();

    bytes32 private constant DOMAIN_TYPEHASH = keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    string private constant STUB =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";

    mapping(address => mapping(uint256 => uint256)) public nonceBitmap;

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, keccak256("Permit2"), block.chainid, address(this)));
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (transferDetails.requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        _useNonce(owner, permit.nonce);
        bytes32 typeHash = keccak256(abi.encodePacked(STUB, witnessTypeString));
        bytes32 structHash = keccak256(
            abi.encode(
                typeHash,
                keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permit.permitted.token, permit.permitted.amount)),
                msg.sender,
                permit.nonce,
                permit.deadline,
                witness
            )
        );
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        if (_recover(digest, signature) != owner) revert InvalidSigner();
        (bool ok, bytes memory ret) = permit.permitted.token.call(
            abi.encodeWithSignature("transferFrom(address,address,uint256)", owner, transferDetails.to, transferDetails.requestedAmount)
        );
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        require(ret.length == 0 || abi.decode(ret, (bool)), "TRANSFER_FROM_FAILED");
    }

    function _useNonce(address owner, uint256 nonce) private {
        uint256 bit = 1 << (nonce & 0xff);
        uint256 flipped = nonceBitmap[owner][nonce >> 8] ^= bit;
        if (flipped & bit == 0) revert InvalidNonce();
    }

    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) revert InvalidSignatureLength();
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSigner();
        return signer;
    }
}

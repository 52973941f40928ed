// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

interface IToken {
    function transfer(address to, uint256 value) external returns (bool);
    function balanceOf(address who) external view returns (uint256);
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external;
}

/// Test-only stand-in for x402's batch-settlement contract (the `batch-settlement` scheme of the x402 EVM SDK), written
/// from the scheme's specification (x402 specs/schemes/batch-settlement/scheme_batch_settlement_evm.md) and the ABI
/// the SDK calls: channels keyed by the EIP-712 hash of their config ("x402 Batch Settlement", "1"), deposits through
/// a collector, cumulative voucher claims authorized by the receiver authorizer (a claim that does not raise a
/// channel's total is a no-op, so a claim submitted twice moves nothing), a settle that sweeps what was claimed to
/// the receiver, and cooperative refunds. Timed withdrawal is not modelled (pendingWithdrawals reads zero).
/// Placed at the SDK's canonical address with anvil_setCode; it keeps no constructor state.
contract MiniBatchSettlement {
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }
    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }
    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }
    struct Channel {
        uint128 balance;
        uint128 totalClaimed;
    }
    struct Withdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }
    struct ReceiverTotals {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH =
        keccak256(
            "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
        );
    bytes32 private constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 private constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 private constant CLAIM_BATCH_TYPEHASH =
        keccak256(
            "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
        );
    bytes32 private constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    mapping(bytes32 => Channel) public channels;
    mapping(bytes32 => Withdrawal) public pendingWithdrawals;
    mapping(address => mapping(address => ReceiverTotals)) public receivers;
    mapping(bytes32 => uint256) public refundNonce;

    function _domainSeparator() private view returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    DOMAIN_TYPEHASH,
                    keccak256("x402 Batch Settlement"),
                    keccak256("1"),
                    block.chainid,
                    address(this)
                )
            );
    }

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", _domainSeparator(), structHash));
    }

    function getChannelId(ChannelConfig calldata c) public view returns (bytes32) {
        return
            _digest(
                keccak256(
                    abi.encode(
                        CHANNEL_CONFIG_TYPEHASH,
                        c.payer,
                        c.payerAuthorizer,
                        c.receiver,
                        c.receiverAuthorizer,
                        c.token,
                        c.withdrawDelay,
                        c.salt
                    )
                )
            );
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    function getClaimBatchDigest(VoucherClaim[] calldata claims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](claims.length);
        for (uint256 i = 0; i < claims.length; i++) {
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(claims[i].voucher.channel),
                    claims[i].voucher.maxClaimableAmount,
                    claims[i].totalClaimed
                )
            );
        }
        return _digest(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
    {
        require(config.withdrawDelay >= 900 && config.withdrawDelay <= 2592000, "withdraw delay out of range");
        bytes32 id = getChannelId(config);
        uint256 before = IToken(config.token).balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, id, collectorData);
        require(IToken(config.token).balanceOf(address(this)) >= before + amount, "deposit not received");
        channels[id].balance += amount;
    }

    function claimWithSignature(VoucherClaim[] calldata claims, bytes calldata authorizerSignature) external {
        require(claims.length > 0, "no claims");
        address authorizer = claims[0].voucher.channel.receiverAuthorizer;
        require(_recover(getClaimBatchDigest(claims), authorizerSignature) == authorizer, "bad authorizer signature");
        _claim(claims, authorizer);
    }

    function claim(VoucherClaim[] calldata claims) external {
        for (uint256 i = 0; i < claims.length; i++) {
            ChannelConfig calldata c = claims[i].voucher.channel;
            require(msg.sender == c.receiver || msg.sender == c.receiverAuthorizer, "not the receiver");
        }
        _claim(claims, address(0));
    }

    function _claim(VoucherClaim[] calldata claims, address authorizer) private {
        for (uint256 i = 0; i < claims.length; i++) {
            VoucherClaim calldata vc = claims[i];
            ChannelConfig calldata c = vc.voucher.channel;
            if (authorizer != address(0)) require(c.receiverAuthorizer == authorizer, "mixed authorizers");
            bytes32 id = getChannelId(c);
            address signer = _recover(getVoucherDigest(id, vc.voucher.maxClaimableAmount), vc.signature);
            require(signer == (c.payerAuthorizer != address(0) ? c.payerAuthorizer : c.payer), "bad voucher");
            require(vc.totalClaimed <= vc.voucher.maxClaimableAmount, "claim above voucher");
            Channel storage ch = channels[id];
            require(vc.totalClaimed <= ch.balance, "claim above balance");
            if (vc.totalClaimed <= ch.totalClaimed) continue; // already claimed: nothing more to move
            receivers[c.receiver][c.token].totalClaimed += vc.totalClaimed - ch.totalClaimed;
            ch.totalClaimed = vc.totalClaimed;
        }
    }

    function settle(address receiver, address token) external {
        ReceiverTotals storage r = receivers[receiver][token];
        uint128 amount = r.totalClaimed - r.totalSettled;
        r.totalSettled = r.totalClaimed;
        if (amount > 0) require(IToken(token).transfer(receiver, amount), "transfer failed");
        emit Settled(receiver, token, msg.sender, amount);
    }

    function refund(ChannelConfig calldata config, uint128 amount) external {
        require(msg.sender == config.receiver || msg.sender == config.receiverAuthorizer, "not the receiver");
        _refund(config, amount);
    }

    function refundWithSignature(ChannelConfig calldata config, uint128 amount, uint256 nonce, bytes calldata sig)
        external
    {
        bytes32 id = getChannelId(config);
        require(nonce == refundNonce[id], "bad refund nonce");
        require(_recover(getRefundDigest(id, nonce, amount), sig) == config.receiverAuthorizer, "bad refund signature");
        _refund(config, amount);
    }

    function _refund(ChannelConfig calldata config, uint128 amount) private {
        bytes32 id = getChannelId(config);
        refundNonce[id] += 1;
        Channel storage ch = channels[id];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 amt = amount < available ? amount : available;
        if (amt == 0) return;
        ch.balance -= amt;
        require(IToken(config.token).transfer(config.payer, amt), "transfer failed");
    }

    function initiateWithdraw(ChannelConfig calldata, uint128) external pure {
        revert("timed withdrawal is not modelled");
    }

    function finalizeWithdraw(ChannelConfig calldata) external pure {
        revert("timed withdrawal is not modelled");
    }

    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory out) = address(this).delegatecall(data[i]);
            require(ok, "multicall call failed");
            results[i] = out;
        }
    }

    function _recover(bytes32 digest, bytes memory signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        if (v < 27) v += 27;
        return ecrecover(digest, v, r, s);
    }
}

/// The ERC-3009 deposit collector: pulls the deposit from the payer with its ReceiveWithAuthorization (nonce
/// keccak256(channelId, salt), as the x402 EVM SDK builds it) and hands it to the settlement contract that called.
contract MiniErc3009Collector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(data, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IToken(token).receiveWithAuthorization(payer, address(this), amount, validAfter, validBefore, nonce, signature);
        require(IToken(token).transfer(msg.sender, amount), "transfer failed");
    }
}

package io.wheelraft.example;

import io.wheelraft.proto.NodeStatusResponse;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** transfer-leader refuses, with the reason, a target that answers status but cannot lead. */
class AdminTransferRefusalTest {

    private static NodeStatusResponse role(String role) {
        return NodeStatusResponse.newBuilder().setRole(role).build();
    }

    @Test
    void aStoppedOrRepairingTargetIsRefusedWithItsReason() {
        assertTrue(AdminCommand.cannotLead(role("error")).orElseThrow().contains("unrecoverable error"));
        assertTrue(AdminCommand.cannotLead(role("repairing")).orElseThrow().contains("storage fault"));
        assertTrue(AdminCommand.cannotLead(role("shutdown")).isPresent());
        assertTrue(AdminCommand.cannotLead(role("witness")).orElseThrow().contains("never leads"));
    }

    @Test
    void aHealthyTargetIsAsked() {
        assertTrue(AdminCommand.cannotLead(role("follower")).isEmpty());
        assertTrue(AdminCommand.cannotLead(role("learner")).isEmpty());
    }
}

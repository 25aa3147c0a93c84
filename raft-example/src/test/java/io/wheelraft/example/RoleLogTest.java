package io.wheelraft.example;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class RoleLogTest {

    @TempDir
    Path dir;

    @Test
    void findsTheFirstStepDownFromTheGivenTermAfterTheGivenMoment() throws Exception {
        Path log = dir.resolve("node1.log");
        Files.writeString(log, String.join("\n",
                "16:39:16.127 INFO  [counter-role-watcher] i.w.e.CounterServer - role change at 2026-11-25T16:39:16.127652526Z: "
                        + "leader term=1 leader=10.77.150.2:7002 (was candidate term=1)",
                "16:39:16.500 INFO  [counter-role-watcher] i.w.e.CounterServer - role change at 2026-11-25T16:39:16.500000000Z: "
                        + "follower term=1 leader=none (was leader term=1)",
                "some other line",
                "16:39:17.643 INFO  [counter-role-watcher] i.w.e.CounterServer - role change at 2026-11-25T16:39:17.643405430Z: "
                        + "follower term=3 leader=none (was leader term=2)",
                "16:39:19.643 INFO  [counter-role-watcher] i.w.e.CounterServer - role change at 2026-11-25T16:39:19.643405430Z: "
                        + "follower term=3 leader=none (was leader term=3)",
                ""));
        Instant cut = Instant.parse("2026-11-25T16:39:17.000Z");
        assertEquals(Optional.of(Instant.parse("2026-11-25T16:39:17.643405430Z")), RoleLog.stoppedLeading(log, 2, cut));
        assertEquals(Optional.empty(), RoleLog.stoppedLeading(log, 1, cut), "its step-down from term 1 came before the cut");
        assertEquals(Optional.of(Instant.parse("2026-11-25T16:39:16.500Z")), RoleLog.stoppedLeading(log, 1, Instant.EPOCH));
        assertEquals(Optional.empty(), RoleLog.stoppedLeading(dir.resolve("missing.log"), 2, cut));
    }
}

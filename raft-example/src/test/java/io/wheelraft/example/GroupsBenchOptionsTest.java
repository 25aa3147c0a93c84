package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code groups-bench} refuses bad phase and load options with one usage line, before starting any process. */
class GroupsBenchOptionsTest {

    private static void assertUsageError(String needle, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String e = err.toString(StandardCharsets.UTF_8).strip();
        assertEquals(2, code, e);
        assertEquals("", out.toString(StandardCharsets.UTF_8));
        assertEquals(1, e.lines().count(), e);
        assertTrue(e.startsWith("wheelraft-counter: ") && e.contains(needle), e + " should name " + needle);
    }

    @Test
    void refusesAnUnknownPhaseNamingIt() {
        assertUsageError("'crash'", "groups-bench", "--groups", "10", "--phases", "idle,crash");
    }

    @Test
    void refusesLoadAndKillSettingsThatCannotMeasureAnything() {
        assertUsageError("--concurrency", "groups-bench", "--concurrency", "0");
        assertUsageError("--write-groups", "groups-bench", "--write-groups", "0");
        assertUsageError("--write-secs", "groups-bench", "--write-secs", "0");
        assertUsageError("--kill-poll-ms", "groups-bench", "--kill-poll-ms", "0");
        assertUsageError("--kill-timeout-secs", "groups-bench", "--kill-timeout-secs", "0");
        assertUsageError("--kill-rounds", "groups-bench", "--kill-rounds", "0");
        assertUsageError("--kill-settle-secs", "groups-bench", "--kill-settle-secs", "0");
        assertUsageError("--quiet-wait-secs", "groups-bench", "--quiet-wait-secs", "-1");
    }

    @Test
    void refusesAnUnknownCollectorNamingTheChoices() {
        assertUsageError("'zgc' is not one of serial, parallel, g1", "groups-bench", "--server-gc", "zgc");
    }

    @Test
    void eachCollectorStartsTheServersWithItsOwnOptions() {
        assertEquals(java.util.List.of("-Xmx2g", "-XX:+UseSerialGC", "-XX:MarkSweepDeadRatio=0"),
                new ServerJvm("2g", ServerJvm.Collector.SERIAL).options());
        assertEquals(java.util.List.of("-Xmx6g", "-XX:+UseParallelGC", "-XX:MarkSweepDeadRatio=0"),
                new ServerJvm("6g", ServerJvm.Collector.PARALLEL).options());
        assertEquals(java.util.List.of("-Xmx6g", "-XX:+UseG1GC"), new ServerJvm("6g", ServerJvm.Collector.G1).options());
    }

    @Test
    void serverJvmOptionsComeAfterTheHeapAndCollectorOptionsInTheOrderGiven() {
        assertEquals(java.util.List.of("-Xmx6g", "-XX:+UseSerialGC", "-XX:MarkSweepDeadRatio=0", "-XX:AOTCache=s.aot", "-XX:TieredStopAtLevel=1"),
                new ServerJvm("6g", ServerJvm.Collector.SERIAL, java.util.List.of("-XX:AOTCache=s.aot", "-XX:TieredStopAtLevel=1")).options());
        GroupsBenchCommand command = new GroupsBenchCommand();
        new picocli.CommandLine(command).parseArgs("--server-jvm-option=-XX:AOTCache=s.aot", "--server-jvm-option", "-Xss512k", "--heap", "3g");
        assertEquals(java.util.List.of("-Xmx3g", "-XX:+UseSerialGC", "-XX:MarkSweepDeadRatio=0", "-XX:AOTCache=s.aot", "-Xss512k"),
                command.serverJvm().options());
        assertTrue(command.commandLine(java.util.EnumSet.of(GroupsBenchCommand.Phase.KILL))
                        .contains(" --server-jvm-option=-XX:AOTCache=s.aot --server-jvm-option=-Xss512k"),
                "the report's command line reproduces the servers' options");
        assertEquals(java.util.List.of("-Xmx2g", "-XX:+UseSerialGC", "-XX:MarkSweepDeadRatio=0"),
                new ServerJvm("2g", ServerJvm.Collector.SERIAL).options(), "none given: the heap and collector options only");
    }

    @Test
    void refusesAServerJvmOptionThatIsNotAnOptionNamingIt() {
        assertUsageError("'AOTCache=s.aot' is not a JVM option", "groups-bench", "--server-jvm-option", "AOTCache=s.aot");
    }

    @Test
    void theCampaignBoundOfAManyGroupsServerIsAPositiveNumber() {
        assertEquals(CounterGroups.CAMPAIGN_LIMIT, CounterGroups.campaignLimit(null));
        assertEquals(40, CounterGroups.campaignLimit(" 40"));
        for (String bad : new String[] {"0", "-3", "many"}) {
            CliException e = org.junit.jupiter.api.Assertions.assertThrows(CliException.class, () -> CounterGroups.campaignLimit(bad));
            assertTrue(e.getMessage().contains("wheelraft.campaignLimit='" + bad + "'"), e.getMessage());
        }
    }

    @Test
    void theQuietDelayOfAManyGroupsServerIsAPositiveNumberOfMilliseconds() {
        assertEquals(1000, CounterGroups.quiesceAfterMs(null, 1000));
        assertEquals(250, CounterGroups.quiesceAfterMs("250 ", 1000));
        for (String bad : new String[] {"0", "-1", "soon"}) {
            CliException e = org.junit.jupiter.api.Assertions.assertThrows(CliException.class, () -> CounterGroups.quiesceAfterMs(bad, 1000));
            assertTrue(e.getMessage().contains("wheelraft.quiesceAfterMs='" + bad + "'") && e.getMessage().contains("milliseconds"), e.getMessage());
        }
    }

    @Test
    void theUnservedQuietDelayAndTheStartBoundAreOverriddenOnlyByPositiveNumbers() {
        assertEquals(-1, CounterGroups.quiesceUnservedAfterMs(null, -1), "unset: NodeOptions' default (one heartbeat interval)");
        assertEquals(1000, CounterGroups.quiesceUnservedAfterMs("1000", -1));
        assertEquals(CounterGroups.START_AWAKE_LIMIT, CounterGroups.startAwakeLimit(null));
        assertEquals(2000, CounterGroups.startAwakeLimit("2000"));
        for (String bad : new String[] {"0", "-1", "lots"}) {
            CliException e = org.junit.jupiter.api.Assertions.assertThrows(CliException.class, () -> CounterGroups.quiesceUnservedAfterMs(bad, -1));
            assertTrue(e.getMessage().contains("wheelraft.quiesceUnservedAfterMs='" + bad + "'"), e.getMessage());
            e = org.junit.jupiter.api.Assertions.assertThrows(CliException.class, () -> CounterGroups.startAwakeLimit(bad));
            assertTrue(e.getMessage().contains("wheelraft.startAwakeLimit='" + bad + "'") && e.getMessage().contains("groups"), e.getMessage());
        }
    }
}

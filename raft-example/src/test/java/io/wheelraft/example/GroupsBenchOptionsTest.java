package io.wheelraft.example;

import io.wheelraft.rpc.RpcOptions;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

    /**
     * What every server gets after its collector's options and before the servers' own: the thread
     * priorities, whole-method C2 compiles, then C1 alone.
     */
    private static final java.util.List<String> PRIORITIES = concat(ServerJvm.THREAD_PRIORITIES,
            java.util.List.of("-XX:PerMethodTrapLimit=0", "-XX:TieredStopAtLevel=1"));

    private static java.util.List<String> concat(java.util.List<String> a, java.util.List<String> b) {
        java.util.List<String> all = new java.util.ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    @Test
    void eachCollectorStartsTheServersWithItsOwnOptionsOnAWholeHeapAndTheThreadPriorities() {
        assertEquals(concat(java.util.List.of("-Xmx2g", "-Xms2g", "-Xmn512m", "-XX:+UseSerialGC", "-XX:MarkSweepDeadRatio=0"), PRIORITIES),
                new ServerJvm("2g", ServerJvm.Collector.SERIAL).options());
        assertEquals(concat(java.util.List.of("-Xmx1g", "-Xms1g", "-Xmn256m", "-XX:+UseParallelGC", "-XX:MarkSweepDeadRatio=0"), PRIORITIES),
                new ServerJvm("1g", ServerJvm.Collector.PARALLEL).options(), "young generation a quarter of a small heap");
        assertEquals(concat(java.util.List.of("-Xmx6g", "-Xms6g", "-XX:+UseG1GC"), PRIORITIES),
                new ServerJvm("6g", ServerJvm.Collector.G1).options(), "G1 sizes its young generation itself");
    }

    @Test
    void serverJvmOptionsComeLastInTheOrderGiven() {
        assertEquals(concat(concat(java.util.List.of("-Xmx6g", "-Xms6g", "-Xmn512m", "-XX:+UseSerialGC", "-XX:MarkSweepDeadRatio=0"), PRIORITIES),
                        java.util.List.of("-XX:AOTCache=s.aot", "-XX:TieredStopAtLevel=1")),
                new ServerJvm("6g", ServerJvm.Collector.SERIAL, java.util.List.of("-XX:AOTCache=s.aot", "-XX:TieredStopAtLevel=1")).options());
        GroupsBenchCommand command = new GroupsBenchCommand();
        new picocli.CommandLine(command).parseArgs("--server-jvm-option=-XX:AOTCache=s.aot", "--server-jvm-option", "-Xss512k", "--heap", "3072m");
        java.util.List<String> options = command.serverJvm().options();
        assertEquals(java.util.List.of("-XX:AOTCache=s.aot", "-Xss512k"), options.subList(options.size() - 2, options.size()));
        assertTrue(options.contains("-Xms3072m") && options.contains("-Xmn512m"), options.toString());
        assertTrue(command.commandLine(java.util.EnumSet.of(GroupsBenchCommand.Phase.KILL))
                        .contains(" --server-jvm-option=-XX:AOTCache=s.aot --server-jvm-option=-Xss512k"),
                "the report's command line reproduces the servers' options");
    }

    @Test
    void hugePagesPutTheHeapOnThemBeforeTheServerOptionsWhichMayUndoIt() {
        java.util.List<String> options = new ServerJvm("6g", ServerJvm.Collector.SERIAL,
                java.util.List.of("-XX:-UseTransparentHugePages"), true).options();
        assertEquals(concat(concat(java.util.List.of("-Xmx6g", "-Xms6g", "-Xmn512m", "-XX:+UseSerialGC", "-XX:MarkSweepDeadRatio=0",
                        "-XX:+UseTransparentHugePages"), PRIORITIES), java.util.List.of("-XX:-UseTransparentHugePages")), options);
        assertFalse(new ServerJvm("6g", ServerJvm.Collector.SERIAL).options().contains(ServerJvm.HUGE_PAGES), "off unless offered");
        GroupsBenchCommand command = new GroupsBenchCommand();
        new picocli.CommandLine(command).parseArgs();
        assertEquals(ServerProcess.TRANSPARENT_HUGE_PAGES, command.serverJvm().options().contains(ServerJvm.HUGE_PAGES),
                "groups-bench asks for huge pages exactly where the kernel offers them");
    }

    @Test
    void theServersJavaThreadNiceIsWhatTheLastOptionsMakeIt() {
        assertEquals(10, new ServerJvm("2g", ServerJvm.Collector.SERIAL).javaThreadNice(), "the defaults");
        assertEquals(0, new ServerJvm("2g", ServerJvm.Collector.SERIAL, java.util.List.of("-XX:ThreadPriorityPolicy=0")).javaThreadNice(),
                "the policy undone: the JVM leaves priorities alone");
        assertEquals(5, new ServerJvm("2g", ServerJvm.Collector.G1, java.util.List.of("-XX:JavaPriority5_To_OSPriority=5")).javaThreadNice());
    }

    @Test
    void aServerJvmOptionCanGiveTheCompilerItsTrapsBack() {
        java.util.List<String> options = new ServerJvm("2g", ServerJvm.Collector.SERIAL, java.util.List.of("-XX:PerMethodTrapLimit=100")).options();
        assertTrue(options.indexOf(ServerJvm.WHOLE_METHOD_COMPILES) >= 0
                && options.indexOf(ServerJvm.WHOLE_METHOD_COMPILES) < options.indexOf("-XX:PerMethodTrapLimit=100"), options.toString());
    }

    @Test
    void aServerJvmOptionCanGiveTheServersC2Back() {
        java.util.List<String> options = new ServerJvm("2g", ServerJvm.Collector.SERIAL, java.util.List.of("-XX:TieredStopAtLevel=4")).options();
        assertTrue(options.indexOf(ServerJvm.C1_ONLY) >= 0 && options.indexOf(ServerJvm.C1_ONLY) < options.indexOf("-XX:TieredStopAtLevel=4"),
                "the JVM takes the last of an option, so the servers' own must come after the default: " + options);
    }

    @Test
    void refusesAHeapSizeTheJvmWouldNotTakeNamingIt() {
        assertUsageError("--heap '2gb' is not a JVM heap size such as 2g or 512m", "groups-bench", "--heap", "2gb");
        assertUsageError("--heap '16m' is too small a heap for a server: give at least 64m", "groups-bench", "--heap", "16m");
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
    void livenessSilenceIsThreeElectionTimeoutsUnlessThePropertySaysOtherwise() {
        assertEquals(3000, CounterGroups.livenessSilenceMs(null, 1000));
        assertEquals(RpcOptions.defaults().livenessSilenceMs(), CounterGroups.livenessSilenceMs(null, 10), "never below the transport's own default");
        assertEquals(1500, CounterGroups.livenessSilenceMs(" 1500", 1000));
        for (String bad : new String[] {"0", "-5", "3s"}) {
            CliException e = org.junit.jupiter.api.Assertions.assertThrows(CliException.class, () -> CounterGroups.livenessSilenceMs(bad, 1000));
            assertTrue(e.getMessage().contains("wheelraft.livenessSilenceMs='" + bad + "'") && e.getMessage().contains("milliseconds"), e.getMessage());
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
    void theUnservedQuietDelayIsOverriddenByZeroOrMoreAndTheStartBoundOnlyByPositiveNumbers() {
        assertEquals(7, CounterGroups.quiesceUnservedAfterMs(null, 7), "unset: the fallback given (NodeOptions' default)");
        assertEquals(1000, CounterGroups.quiesceUnservedAfterMs("1000", -1));
        assertEquals(0, CounterGroups.quiesceUnservedAfterMs("0", -1), "0: ask at the first settled heartbeat");
        assertEquals(CounterGroups.START_AWAKE_LIMIT, CounterGroups.startAwakeLimit(null));
        assertEquals(2000, CounterGroups.startAwakeLimit("2000"));
        for (String bad : new String[] {"-1", "lots"}) {
            CliException e = org.junit.jupiter.api.Assertions.assertThrows(CliException.class, () -> CounterGroups.quiesceUnservedAfterMs(bad, -1));
            assertTrue(e.getMessage().contains("wheelraft.quiesceUnservedAfterMs='" + bad + "'") && e.getMessage().contains("0 or more"), e.getMessage());
        }
        for (String bad : new String[] {"0", "-1", "lots"}) {
            CliException e = org.junit.jupiter.api.Assertions.assertThrows(CliException.class, () -> CounterGroups.startAwakeLimit(bad));
            assertTrue(e.getMessage().contains("wheelraft.startAwakeLimit='" + bad + "'") && e.getMessage().contains("groups"), e.getMessage());
        }
    }
}

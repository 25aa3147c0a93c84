package io.wheelraft.example;

import io.wheelraft.proto.GroupsSummaryResponse;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The many-groups options of the command line ({@code --groups}, {@code --group}) and the lines of {@code status --groups}. */
class GroupsOptionsTest {

    private record Result(int code, String out, String err) {
    }

    private static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static void assertUsageError(Result r, String needle) {
        assertEquals(2, r.code(), r.err());
        assertEquals("", r.out());
        String[] lines = r.err().strip().split("\n");
        assertEquals(1, lines.length, "expected one line, got: " + r.err());
        assertTrue(lines[0].startsWith("wheelraft-counter: ") && lines[0].contains(needle), lines[0] + " should name " + needle);
        assertFalse(r.err().contains("\tat "), "stack trace printed: " + r.err());
    }

    @Test
    void serverRefusesAGroupCountOutsideOneToTheMaximum() {
        assertUsageError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", "127.0.0.1:1", "--groups", "0"), "--groups must be between 1");
        assertUsageError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", "127.0.0.1:1", "--groups", "-3"), "was -3");
        assertUsageError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", "127.0.0.1:1",
                "--groups", Integer.toString(ServerCommand.MAX_GROUPS + 1)), "--groups");
        assertUsageError(run("server", "--data", "d", "--self", "127.0.0.1:1", "--peers", "127.0.0.1:1", "--groups", "many"), "'many'");
    }

    @Test
    void clientRefusesANegativeOrNonNumericGroup() {
        assertUsageError(run("client", "--peers", "127.0.0.1:1", "--group", "-1", "get"), "--group must be 0 or more");
        assertUsageError(run("client", "--peers", "127.0.0.1:1", "--group", "seven", "get"), "'seven'");
    }

    @Test
    void benchRefusesAGroupCountBelowOne() {
        assertUsageError(run("bench", "--peers", "127.0.0.1:1", "--groups", "0"), "--groups must be at least 1");
    }

    @Test
    void groupsBenchRefusesBadCountsAndHeapSizesBeforeStartingAnything() {
        assertUsageError(run("groups-bench", "--groups", "100,0"), "--groups needs counts between 1");
        assertUsageError(run("groups-bench", "--heap", "lots"), "--heap 'lots'");
        assertUsageError(run("groups-bench", "--window-secs", "0"), "--window-secs");
    }

    @Test
    void statusWithGroupsPrintsABareDownLinePerUnreachableAddressInOrderAndExitsOne() throws Exception {
        var ports = LocalCluster.freePorts(2);
        String a = "127.0.0.1:" + ports.get(0);
        String b = "127.0.0.1:" + ports.get(1);
        Result r = run("status", "--peers", b + "," + a, "--groups", "--timeout-ms", "300");
        assertEquals(1, r.code());
        assertEquals(b + " down\n" + a + " down\n", r.out());
        assertTrue(r.err().contains("no node"), r.err());
    }

    @Test
    void groupsStatusLinesSayHowManyGroupsEachAddressHostsLeadsAndHasQuietInTheOrderGiven() {
        List<String> lines = GroupsStatusLines.lines(List.of(
                new GroupsStatusLines.Answer("b:2", GroupsSummaryResponse.newBuilder().setGroups(1000).setLeaders(334).setQuiet(0).build()),
                new GroupsStatusLines.Answer("a:1", null),
                new GroupsStatusLines.Answer("c:3", GroupsSummaryResponse.newBuilder().setGroups(1000).setLeaders(0).setQuiet(12).build())));
        assertEquals(List.of("b:2 groups=1000 leaders=334 quiet=0", "a:1 down", "c:3 groups=1000 leaders=0 quiet=12"), lines);
    }

    @Test
    void groupNumbersAreTheirDecimalIds() {
        assertEquals(List.of("0", "1", "2"), CounterGroups.groupIds(3));
        assertEquals("42", CounterGroups.groupId(42));
        assertThrows(IllegalArgumentException.class, () -> CounterGroups.groupId(-1));
    }
}

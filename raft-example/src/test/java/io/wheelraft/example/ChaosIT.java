package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * End to end, from the built jar: {@code chaos --rounds 3} starts three server processes from it,
 * kills the leader under load each round, and must report nothing lost or doubled, a linearizable
 * history and the elections it caused. Runs in
 * {@code mvn verify} after the jar is packaged (failsafe).
 */
class ChaosIT {

    @Test
    void threeRoundsOfLeaderKillsLoseAndDoubleNothing() throws Exception {
        Path jar = Path.of(System.getProperty("wheelraft.counter.jar", "target/wheelraft-counter.jar"));
        assertTrue(Files.isRegularFile(jar), "the shaded jar is missing: " + jar);
        Path out = Path.of("target", "chaos-it").toAbsolutePath();
        Path log = Files.createDirectories(out).resolve("chaos.log");
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        Process p = new ProcessBuilder(List.of(java, "-jar", jar.toString(), "chaos", "--rounds", "3", "--election-timeout-ms", "300",
                "--concurrency", "8", "--out", out.toString(), "--no-progress"))
                .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(new File("/dev/null")).start();
        boolean finished = p.waitFor(150, TimeUnit.SECONDS);
        if (!finished) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertTrue(finished, "chaos did not finish in time:\n" + output);
        assertEquals(0, p.exitValue(), output);

        String json = Files.readString(out.resolve("report.json"), StandardCharsets.UTF_8);
        assertEquals(3, count(json, "\"round\": "), json);
        assertEquals("0", field(json, "lost"), json);
        assertEquals("0", field(json, "doubled"), json);
        assertEquals("true", field(json, "invariantsHold"), json);
        assertEquals("true", field(json, "complete"), json);
        // Every kill of the leader is followed by an election, and the report counts them.
        assertTrue(Long.parseLong(field(json, "elections")) >= 3, json);
        assertEquals("\"LINEARIZABLE\"", field(json, "outcome"), json);
        long acked = Long.parseLong(field(json, "acknowledged"));
        long unknown = Long.parseLong(field(json, "unknown"));
        long value = Long.parseLong(field(json, "finalValue"));
        assertTrue(acked > 0, "no increment was acknowledged");
        assertTrue(value >= acked && value <= acked + unknown, "value " + value + " vs acknowledged " + acked + " + unknown " + unknown);
        for (String f : List.of("report.md", "report.html", "histogram.png", "timeline.png")) {
            assertTrue(Files.size(out.resolve(f)) > 0, f + " is empty");
        }
        // Every child server is gone.
        assertEquals(0, p.descendants().count());
    }

    /**
     * One isolate-leader round (Linux, root, iproute2; skipped elsewhere): each server in its own
     * network namespace, the leader's packets dropped silently for three election timeouts. The
     * others must elect a new leader, the cut-off leader must acknowledge nothing invoked after its
     * lease, and after the heal it must step down and catch up; nothing lost, the history
     * linearizable, and the namespaces, veths and bridge gone afterwards.
     */
    @Test
    void aLeaderCutOffWithoutResetIsReplacedAndCatchesUpAfterTheHeal() throws Exception {
        String unsupported = NetworkNamespaces.unsupportedReason();
        assumeTrue(unsupported == null, "isolate-leader cannot run here: " + unsupported);
        Path jar = Path.of(System.getProperty("wheelraft.counter.jar", "target/wheelraft-counter.jar"));
        Path out = Path.of("target", "chaos-it-isolate").toAbsolutePath();
        Path log = Files.createDirectories(out).resolve("chaos.log");
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        Process p = new ProcessBuilder(List.of(java, "-jar", jar.toString(), "chaos", "--rounds", "1", "--mode", "isolate-leader",
                "--election-timeout-ms", "500", "--concurrency", "8", "--out", out.toString(), "--no-progress"))
                .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(new File("/dev/null")).start();
        boolean finished = p.waitFor(90, TimeUnit.SECONDS);
        if (!finished) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertTrue(finished, "chaos did not finish in time:\n" + output);
        assertEquals(0, p.exitValue(), output);

        String json = Files.readString(out.resolve("report.json"), StandardCharsets.UTF_8);
        assertEquals(1, count(json, "\"round\": "), json);
        assertEquals("true", field(json, "complete"), json);
        assertEquals("0", field(json, "lost"), json);
        assertEquals("0", field(json, "doubled"), json);
        assertEquals("\"LINEARIZABLE\"", field(json, "outcome"), json);
        // The others elected a leader among themselves, and the clients found it.
        assertNotEquals(field(json, "victim"), field(json, "newLeader"), json);
        assertNotEquals("null", field(json, "electionMs"), json);
        assertNotEquals("null", field(json, "firstAckMs"), json);
        assertEquals("0", field(json, "victimAcksAfterLease"), json);
        // After the heal the old leader stepped down and applied everything committed meanwhile.
        assertNotEquals("null", field(json, "stepDownMs"), json);
        assertNotEquals("null", field(json, "catchUpMs"), json);
        assertEquals("true", field(json, "invariantsHold"), json);
        assertEquals(0, p.descendants().count());
        String left = new String(new ProcessBuilder("ip", "-o", "link", "show").start().getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                + new String(new ProcessBuilder("ip", "netns", "list").start().getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertFalse(left.contains("wr" + p.pid() + "n") || left.contains("wrb" + p.pid()) || left.contains("wrv" + p.pid()),
                "the run's namespaces, veths or bridge are still there:\n" + left);
    }

    @Test
    void aRunStoppedBySigtermWritesWhatItMeasuredMarkedIncomplete() throws Exception {
        Path jar = Path.of(System.getProperty("wheelraft.counter.jar", "target/wheelraft-counter.jar"));
        Path out = Path.of("target", "chaos-it-sigterm").toAbsolutePath();
        Path log = Files.createDirectories(out).resolve("chaos.log");
        Files.deleteIfExists(out.resolve("report.json"));
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        Process p = new ProcessBuilder(List.of(java, "-jar", jar.toString(), "chaos", "--rounds", "50", "--election-timeout-ms", "300",
                "--concurrency", "4", "--out", out.toString()))
                .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(new File("/dev/null")).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            // The progress bar (one line per step when not on a terminal) starts round 2 once round 1 is done.
            while (!Files.readString(log, StandardCharsets.UTF_8).contains("round 2/50")) {
                assertTrue(p.isAlive(), "chaos exited early:\n" + Files.readString(log, StandardCharsets.UTF_8));
                assertTrue(System.nanoTime() - deadline < 0, "no round finished within 120 s:\n" + Files.readString(log, StandardCharsets.UTF_8));
                TimeUnit.MILLISECONDS.sleep(100); // polling the log for the condition
            }
            p.destroy(); // SIGTERM, as Ctrl-C's shutdown path
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "chaos did not stop after SIGTERM");
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String json = Files.readString(out.resolve("report.json"), StandardCharsets.UTF_8);
        assertEquals("false", field(json, "complete"), json);
        assertTrue(field(json, "incompleteReason").contains("interrupted"), json);
        assertTrue(count(json, "\"round\": ") >= 1, "the finished round is in the report: " + json);
        assertEquals("false", field(json, "invariantsHold"), json);
        assertTrue(Files.readString(out.resolve("report.html"), StandardCharsets.UTF_8).contains("INCOMPLETE"));
        assertTrue(Files.size(out.resolve("timeline.png")) > 0);
    }

    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\": ([^,\\n}]+)").matcher(json);
        assertTrue(m.find(), name + " missing in " + json);
        return m.group(1).trim();
    }

    private static int count(String s, String needle) {
        int n = 0;
        for (int i = s.indexOf(needle); i >= 0; i = s.indexOf(needle, i + 1)) {
            n++;
        }
        return n;
    }
}

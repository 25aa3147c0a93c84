package io.wheelraft.example;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code chaos --link-loss/--link-delay/--link-jitter} without root: the options, their refusals,
 * the nft rules written for each server's namespace, the counters read back, and what the report
 * says about the fault. Applying the rules needs root and is tried by hand (docs/chaos.md).
 */
class ChaosLinkFaultTest {

    @TempDir
    Path dir;

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    private static void assertRefused(CliRun r, String needle) {
        assertEquals(2, r.code(), r.err());
        String line = r.err().strip();
        assertEquals(1, line.lines().count(), line);
        assertTrue(line.contains(needle), line + " should mention " + needle);
    }

    @Test
    void helpDescribesTheLinkOptionsWithTheirDefaults() {
        CliRun r = run("chaos", "--help");
        assertEquals(0, r.code());
        for (String option : List.of("--link-loss=PCT", "--link-delay=MS", "--link-jitter=MS")) {
            int at = r.out().indexOf("      " + option); // the option's own entry, not the synopsis
            assertTrue(at >= 0, r.out());
            String rest = r.out().substring(at, r.out().indexOf("Default: 0", at) + 10);
            assertTrue(rest.length() < 400, "no default right after " + option + ": " + rest);
        }
        assertTrue(r.out().contains("Drop PCT percent of the packets each server sends"), r.out());
    }

    @Test
    void valuesThatCannotRunAreRefusedWithOneLine() {
        assertRefused(run("chaos", "--link-loss", "100", "--out", dir.toString()), "--link-loss must be 0 to 99 percent, was 100");
        assertRefused(run("chaos", "--link-loss", "-1", "--out", dir.toString()), "--link-loss");
        assertRefused(run("chaos", "--link-delay", "-5", "--out", dir.toString()), "--link-delay must be 0 to 10000 ms");
        assertRefused(run("chaos", "--link-delay", "10", "--link-jitter", "20", "--out", dir.toString()),
                "--link-jitter must be 0 to --link-delay (10 ms), was 20");
        assertRefused(run("chaos", "--link-jitter", "5", "--out", dir.toString()), "--link-jitter");
        assertRefused(run("chaos", "--settle-ms", "-1", "--out", dir.toString()), "--settle-ms must be 0 to 600000 ms, was -1");
    }

    @Test
    void modesThatCannotRunInNamespacesAreRefusedWithOneLine() {
        assertRefused(run("chaos", "--mode", "disk-full", "--link-loss", "5", "--out", dir.toString()),
                "--link-loss/--link-delay do not run with --mode disk-full");
        assertTrue(ChaosRunner.Settings.LINK_FAULT_MODES.containsAll(List.of(ChaosRunner.Mode.NONE, ChaosRunner.Mode.KILL_LEADER)));
    }

    @Test
    void aMissingNftIsNamedWithWhatToDo() {
        String why = LinkFaults.unsupportedReason("wheelraft-no-such-nft");
        assertTrue(why.contains("nft") && why.contains("install nftables"), why);
        assertFalse(why.contains("\n"), why);
    }

    @Test
    void valuesAndTheirDescription() {
        assertNull(new LinkFault(5, 20, 10).invalidReason());
        assertFalse(LinkFault.NONE.any());
        assertEquals("none", LinkFault.NONE.describe());
        assertEquals("5% loss on every link between servers", new LinkFault(5, 0, 0).describe());
        assertEquals("20 ± 10 ms delay on every link between servers", new LinkFault(0, 20, 10).describe());
        assertEquals("5% loss and 20 ms delay on every link between servers", new LinkFault(5, 20, 0).describe());
        assertTrue(new LinkFault(0, 20, 10).delays());
        assertFalse(new LinkFault(5, 0, 0).delays());
        assertTrue(new ChaosRunner.Settings(1, 1000, ChaosRunner.Mode.NONE, dir, 16, 60, 0, false, new LinkFault(5, 0, 0)).inNamespaces());
        assertFalse(ChaosReportFixture.settings(dir).inNamespaces());
    }

    @Test
    void lossAloneCountsAndDropsWhatAServerSendsToTheOthers() {
        String script = LinkFaults.script(5, List.of(), List.of("10.77.3.2", "10.77.3.3"));
        assertFalse(script.contains("nat"), script);
        assertTrue(script.contains("table ip wheelraft_links {"), script);
        assertTrue(script.contains("type filter hook output priority 0;"), script);
        assertTrue(script.contains("ip daddr { 10.77.3.2, 10.77.3.3 } counter\n"), script);
        assertTrue(script.contains("ip daddr { 10.77.3.2, 10.77.3.3 } numgen random mod 100 < 5 counter drop"), script);
    }

    @Test
    void delaySendsEachPeerConnectionToItsRelayPortAndLossCoversTheRelay() {
        String script = LinkFaults.script(0, List.of(new LinkFaults.Redirect("10.77.3.2", 7002, "10.77.3.253", 41001),
                new LinkFaults.Redirect("10.77.3.3", 7003, "10.77.3.253", 41002)), List.of("10.77.3.2", "10.77.3.3", "10.77.3.253"));
        assertTrue(script.contains("type nat hook output priority -100;"), script);
        assertTrue(script.contains("ip daddr 10.77.3.2 tcp dport 7002 counter dnat to 10.77.3.253:41001"), script);
        assertTrue(script.contains("ip daddr 10.77.3.3 tcp dport 7003 counter dnat to 10.77.3.253:41002"), script);
        assertTrue(script.contains("ip daddr { 10.77.3.2, 10.77.3.3, 10.77.3.253 } counter\n"), script);
        assertFalse(script.contains("drop"), "no loss asked: " + script);
    }

    @Test
    void countersAreReadFromNftsListing() {
        String listing = """
                table ip wheelraft_links {
                	chain loss {
                		type filter hook output priority filter; policy accept;
                		ip daddr { 10.77.3.2, 10.77.3.3 } counter packets 2000 bytes 190000
                		ip daddr { 10.77.3.2, 10.77.3.3 } numgen random mod 100 < 5 counter packets 98 bytes 9000 drop
                	}
                }
                """;
        long[] c = LinkFaults.lossCounters(listing);
        assertEquals(2000, c[0]);
        assertEquals(98, c[1]);
    }

    @Test
    void theReportStatesTheLinkFaultAndWhatItDid() {
        ChaosRunner.Settings s = new ChaosRunner.Settings(3, 1000, ChaosRunner.Mode.NONE, dir, 16, 30, 3600, false, new LinkFault(5, 20, 10));
        LinkFaults.Totals totals = new LinkFaults.Totals(2000, 98, new LinkRelay.Totals(6, 0, 500, 123_456, 10.2, 20.4, 31.9));
        ChaosReport r = new ChaosReport(s, new ChaosReport.Measured(List.of(), 20, 0, 0, 20L, "", List.of(), 0, 0, 2, 31.5,
                Map.of("10.77.3.1:7001", "n1", "10.77.3.2:7002", "n2", "10.77.3.3:7003", "n3"), List.of(), ChaosReportFixture.buckets(),
                HistoryCheck.check(ChaosReportFixture.goodHistory(20), Duration.ofSeconds(10)), "Checked", null, totals));
        String link = r.summary().lines().filter(l -> l.contains("link fault:")).findFirst().orElseThrow(() -> new AssertionError(r.summary()));
        assertTrue(link.contains("5% loss and 20 ± 10 ms delay on every link between servers"), link);
        assertTrue(link.contains("nft dropped 98 of 2,000 packets the servers sent each other (4.9%)"), link);
        assertTrue(link.contains("500 chunks, 123,456 bytes"), link);
        assertTrue(link.contains("10.2 / 20.4 / 31.9"), link);
        JsonObject o = JsonParser.parseString(r.json()).getAsJsonObject().getAsJsonObject("linkFault");
        assertEquals(5, o.get("lossPercent").getAsInt());
        assertEquals(20, o.get("delayMs").getAsInt());
        assertEquals(10, o.get("jitterMs").getAsInt());
        assertEquals(98, o.get("packetsDropped").getAsLong());
        assertEquals(123_456, o.getAsJsonObject("relay").get("bytes").getAsLong());
        assertTrue(r.markdown().contains("Link fault for the whole run: 5% loss and 20 ± 10 ms delay"), r.markdown());
        assertTrue(r.title().contains("5% loss and 20 ± 10 ms delay"), r.title());
        assertTrue(ChaosHtml.page(r, new byte[0], new byte[0]).contains("<th>link fault</th><td>5% loss and 20 ± 10 ms delay"));

        // Clean links: the JSON says none, the summary has no link line.
        ChaosReport clean = ChaosReportFixture.report(dir, ChaosReportFixture.goodHistory(20), 20L, 20, null);
        assertEquals("none", JsonParser.parseString(clean.json()).getAsJsonObject().getAsJsonObject("linkFault").get("description").getAsString());
        assertFalse(clean.summary().contains("link fault"), clean.summary());
    }
}

package io.wheelraft.example;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.imageio.ImageIO;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Opens a generated report.html in headless Chromium (Debian's {@code chromium}; CI installs it)
 * and checks what a reader would see: the charts decoded with a real size, the tables with their
 * rows, nothing fetched from the network.
 */
class ChaosReportChromiumTest {

    private static final Path CHROMIUM = Path.of(System.getProperty("wheelraft.chromium", "/usr/bin/chromium"));

    @TempDir
    Path dir;

    @Test
    void theReportRendersItsChartsAndTablesInABrowser() throws Exception {
        assertTrue(Files.isExecutable(CHROMIUM), CHROMIUM + " is missing: apt-get install -y chromium (.ci/run installs it)");
        ChaosReportFixture.report(dir, ChaosReportFixture.goodHistory(300), 300L, 300, null).write(dir);
        String html = Files.readString(dir.resolve("report.html"), StandardCharsets.UTF_8);
        assertTrue(!html.contains("http://") && !html.contains("https://"), "the page must not need the network");

        // The same page plus a probe that, once everything is decoded and laid out, writes what it
        // measured into the DOM, which --dump-dom then prints.
        String probe = "<script>window.addEventListener('load',()=>{const out=[];"
                + "document.querySelectorAll('img,svg').forEach(e=>{const r=e.getBoundingClientRect();"
                + "out.push('chart '+(e.id||e.tagName)+' '+Math.round(r.width)+'x'+Math.round(r.height)+' natural '+(e.naturalWidth||0));});"
                + "document.querySelectorAll('table').forEach(t=>{const r=t.getBoundingClientRect();"
                + "out.push('table '+t.id+' rows '+t.rows.length+' height '+Math.round(r.height));});"
                + "const p=document.createElement('pre');p.id='probe';p.textContent=out.join('\\n');document.body.appendChild(p);});</script>";
        Path probed = dir.resolve("probed.html");
        Files.writeString(probed, html.replace("</body>", probe + "</body>"), StandardCharsets.UTF_8);
        String dom = chromium(List.of("--dump-dom", probed.toUri().toString()));
        Matcher m = Pattern.compile("<pre id=\"probe\">([^<]*)</pre>").matcher(dom);
        assertTrue(m.find(), "the probe did not run:\n" + dom.substring(0, Math.min(2000, dom.length())));
        String probeOut = m.group(1);

        for (String chart : List.of("timeline", "histogram")) {
            Matcher c = Pattern.compile("chart " + chart + " (\\d+)x(\\d+) natural (\\d+)").matcher(probeOut);
            assertTrue(c.find(), chart + " not rendered: " + probeOut);
            assertTrue(Integer.parseInt(c.group(1)) > 400 && Integer.parseInt(c.group(2)) > 200, chart + " too small: " + probeOut);
            assertTrue(Integer.parseInt(c.group(3)) > 0, chart + " did not decode: " + probeOut);
        }
        assertEquals(3 + 1, rows(probeOut, "rounds"), "a header and one row per round: " + probeOut);
        assertEquals(3 + 1, rows(probeOut, "nodes"), probeOut);
        assertTrue(rows(probeOut, "settings") >= 5, probeOut);
        assertTrue(rows(probeOut, "verdicts") >= 5, probeOut);
        assertTrue(dom.contains("PASS"), "verdict banner missing");

        // A screenshot is not blank: the charts' dark lines and the coloured markers are there.
        Path shot = dir.resolve("shot.png");
        chromium(List.of("--window-size=1280,2400", "--screenshot=" + shot, dir.resolve("report.html").toUri().toString()));
        BufferedImage img = ImageIO.read(shot.toFile());
        assertEquals(1280, img.getWidth());
        int coloured = 0;
        for (int y = 0; y < img.getHeight(); y += 2) {
            for (int x = 0; x < img.getWidth(); x += 2) {
                int rgb = img.getRGB(x, y);
                int r = rgb >> 16 & 0xFF;
                int g = rgb >> 8 & 0xFF;
                int b = rgb & 0xFF;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 80) {
                    coloured++;
                }
            }
        }
        assertTrue(coloured > 500, "the screenshot shows almost no colour (charts missing?): " + coloured + " coloured samples");
    }

    private static int rows(String probe, String table) {
        Matcher m = Pattern.compile("table " + table + " rows (\\d+) height (\\d+)").matcher(probe);
        assertTrue(m.find(), "table " + table + " missing: " + probe);
        assertTrue(Integer.parseInt(m.group(2)) > 0, "table " + table + " has no height: " + probe);
        return Integer.parseInt(m.group(1));
    }

    private String chromium(List<String> args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--no-first-run", "--user-data-dir=" + dir.resolve("chromium-profile"), "--virtual-time-budget=5000"));
        cmd.addAll(args);
        Path out = dir.resolve("chromium.out");
        Path err = dir.resolve("chromium.err");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(new File("/dev/null")).start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish within 90 s: " + Files.readString(err));
        }
        assertEquals(0, p.exitValue(), "chromium failed: " + Files.readString(err));
        return Files.readString(out, StandardCharsets.UTF_8);
    }
}

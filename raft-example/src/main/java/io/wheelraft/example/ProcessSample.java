package io.wheelraft.example;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What one server process costs, read from outside it (Linux only): CPU time and resident memory
 * from {@code /proc/PID}, and from its Prometheus endpoint the JVM's heap in use, its live threads
 * and the timer wheel's pending entries. Stateless; each call reads afresh.
 */
final class ProcessSample {

    /** Clock ticks per second of {@code /proc/PID/stat}'s CPU times (USER_HZ, 100 on Linux). */
    static final long TICKS_PER_SECOND = 100;

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private ProcessSample() {
    }

    /** User plus system CPU time the process has used so far, in nanoseconds. */
    static long cpuNanos(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
        // the command name (field 2) may hold spaces; the fields after it are plain
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14 and 15)
        return ticks * TimeUnit.SECONDS.toNanos(1) / TICKS_PER_SECOND;
    }

    /** Resident set size in bytes ({@code VmRSS}). */
    static long rssBytes(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.US_ASCII)) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IOException("no VmRSS in /proc/" + pid + "/status");
    }

    /**
     * The figures of a Prometheus scrape this benchmark reads. {@code heapUsedBytes} leaves out the
     * young generation's eden: read right after a full collection (which moves every live object
     * out of it), what eden holds by the time the scrape is answered is what the process allocated
     * since, mostly the scrape itself; it was 7-8 MB on an idle one-group server, against 9 MB of
     * live data.
     */
    record Scrape(double heapUsedBytes, double liveThreads, double wheelEntries) {
    }

    /** Scrapes {@code http://HOST:PORT/metrics}. */
    static Scrape scrape(String host, int port) throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/metrics"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("metrics of " + host + ":" + port + " answered HTTP " + r.statusCode());
        }
        return parse(r.body());
    }

    static Scrape parse(String text) {
        double heap = 0;
        Map<String, Double> plain = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            String name = line.substring(0, space);
            double value = Double.parseDouble(line.substring(space + 1));
            if (name.startsWith("jvm_memory_used_bytes{") && name.contains("area=\"heap\"") && !name.contains("Eden")) {
                heap += value;
            } else if (!name.contains("{")) {
                plain.put(name, value);
            }
        }
        return new Scrape(heap, plain.getOrDefault("jvm_threads_live_threads", Double.NaN),
                plain.getOrDefault("wheelraft_timer_pending", Double.NaN));
    }

    /** Asks the JVM to collect garbage now ({@code jcmd PID GC.run}), so the heap in use is what is live. */
    static void collectGarbage(long pid) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("jcmd", Long.toString(pid), "GC.run").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("jcmd " + pid + " GC.run failed");
        }
    }
}

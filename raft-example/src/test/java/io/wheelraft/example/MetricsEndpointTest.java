package io.wheelraft.example;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.wheelraft.timer.Timers;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Prometheus scrape carries the JVM's, the process's and the timer wheel's meters. */
class MetricsEndpointTest {

    private static String scrape(int port) throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return r.body();
    }

    /** The sum over every series of {@code metric} (e.g. all memory pools); fails if it has none. */
    private static double value(String scrape, String metric) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(metric) + "(\\{[^}]*\\})? (\\S+)$").matcher(scrape);
        double sum = 0;
        int series = 0;
        while (m.find()) {
            sum += Double.parseDouble(m.group(2));
            series++;
        }
        assertTrue(series > 0, metric + " missing from the scrape");
        return sum;
    }

    @Test
    void scrapeHasJvmProcessAndTimerWheelMeters() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (ProcessMetrics ignored = ProcessMetrics.bind(registry, Timers.sharedStats());
             MetricsEndpoint endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry)) {
            CountDownLatch fired = new CountDownLatch(1);
            Timers.shared().newTimeout(t -> fired.countDown(), 1, TimeUnit.MILLISECONDS);
            assertTrue(fired.await(10, TimeUnit.SECONDS), "the shared timer never fired");
            String body = scrape(endpoint.port());
            assertTrue(value(body, "jvm_memory_used_bytes") > 0);
            assertTrue(value(body, "jvm_threads_live_threads") > 0);
            assertTrue(body.contains("jvm_gc_"), "no GC meters");
            assertTrue(value(body, "jvm_classes_loaded_classes") > 0);
            value(body, "process_cpu_usage");
            assertTrue(value(body, "system_cpu_count") > 0);
            assertTrue(value(body, "process_uptime_seconds") > 0);
            value(body, "wheelraft_timer_pending");
            assertTrue(value(body, "wheelraft_timer_fired_total") >= 1, "the fired timeout is not counted");
            assertTrue(value(body, "wheelraft_timer_lateness_seconds_total") >= 0);
            value(body, "wheelraft_timer_lateness_max_seconds");
        }
    }
}

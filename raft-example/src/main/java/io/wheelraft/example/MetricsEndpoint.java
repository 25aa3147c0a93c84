package io.wheelraft.example;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * Serves the node's Micrometer metrics in the Prometheus text format at {@code /metrics}, on the
 * JDK's built-in HTTP server (one thread). Thread-safe.
 */
final class MetricsEndpoint implements AutoCloseable {

    private final HttpServer http;

    private MetricsEndpoint(HttpServer http) {
        this.http = http;
    }

    /** @throws CliException (exit 1) if the port cannot be bound */
    static MetricsEndpoint start(String host, int port, PrometheusMeterRegistry registry) {
        HttpServer http;
        try {
            http = HttpServer.create(new InetSocketAddress(host, port), 16);
        } catch (IOException e) {
            throw CliException.failed("cannot serve metrics on " + host + ":" + port + ": "
                    + (e instanceof java.net.BindException ? "port " + port + " is already in use" : e.getMessage()));
        }
        http.createContext("/metrics", exchange -> {
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        http.start();
        return new MetricsEndpoint(http);
    }

    int port() {
        return http.getAddress().getPort();
    }

    @Override
    public void close() {
        http.stop(0);
    }
}

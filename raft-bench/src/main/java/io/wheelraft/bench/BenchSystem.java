package io.wheelraft.bench;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * One system under test: how to start one of its server nodes and how to make its client. The
 * three share the JVM options, the election timeout and the load; only their own code differs.
 *
 * @param key       the name on the command line ({@code --systems})
 * @param label     the name in the table, with version, log and transport
 */
record BenchSystem(String key, String label, ServerCluster.NodeCommand command, Function<List<String>, CounterClient> clients) {

    /**
     * WheelRaft: raft-example's counter server from its runnable jar (RocksDB log, gRPC), driven
     * through the library's public {@code RaftClient} async API, one independent call per increment.
     */
    static BenchSystem wheelRaft(Path counterJar, int electionTimeoutMs) {
        return new BenchSystem("wheelraft", "WheelRaft 0.1.0-SNAPSHOT (RocksDB log, gRPC, RaftClient)",
                counterServer(counterJar, electionTimeoutMs), WheelRaftCounterClient::new);
    }

    private static ServerCluster.NodeCommand counterServer(Path counterJar, int electionTimeoutMs) {
        return (i, data, endpoints) -> List.of("-jar", counterJar.toString(), "server", "--data", data.toString(),
                "--self", endpoints.get(i), "--peers", String.join(",", endpoints),
                "--election-timeout-ms", Integer.toString(electionTimeoutMs));
    }

    /** SOFAJRaft 1.3.15: {@link JraftCounterServer} on this module's class path (RocksDB log, Bolt). */
    static BenchSystem jraft(int electionTimeoutMs) {
        return new BenchSystem("jraft", "SOFAJRaft 1.3.15 (RocksDB log, Bolt)",
                (i, data, endpoints) -> List.of("-cp", System.getProperty("java.class.path"), JraftCounterServer.class.getName(),
                        data.toString(), endpoints.get(i), String.join(",", endpoints), Integer.toString(electionTimeoutMs)),
                JraftCounterClient::new);
    }

    /** Apache Ratis 3.3.0: {@link RatisCounterServer} on this module's class path (segmented log, gRPC). */
    static BenchSystem ratis(int electionTimeoutMs) {
        return new BenchSystem("ratis", "Apache Ratis 3.3.0 (segmented log, gRPC)",
                (i, data, endpoints) -> List.of("-cp", System.getProperty("java.class.path"), RatisCounterServer.class.getName(),
                        data.toString(), Integer.toString(i), String.join(",", endpoints), Integer.toString(electionTimeoutMs)),
                RatisCounterClient::new);
    }

    static BenchSystem byKey(String key, Path counterJar, int electionTimeoutMs) {
        return switch (key.toLowerCase(Locale.ROOT)) {
            case "wheelraft" -> wheelRaft(counterJar, electionTimeoutMs);
            case "jraft", "sofajraft" -> jraft(electionTimeoutMs);
            case "ratis" -> ratis(electionTimeoutMs);
            default -> throw new IllegalArgumentException("unknown system '" + key + "' (expected wheelraft, jraft or ratis)");
        };
    }
}

package io.wheelraft.bench;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The latency floor of one replicated write on this machine, with no Raft library in the way: the
 * smallest thing that does what a 3-node Raft increment must do at 1 in flight. Three processes on
 * loopback (a leader and two followers) and a client thread in this one; plain blocking TCP
 * sockets with TCP_NODELAY and no framework; every fsync is a {@code write} into a pre-sized
 * file followed by {@code force(false)} (fdatasync), done on the thread that read the request, so
 * there is no thread hand-off anywhere. Per increment: client → leader; leader → both followers;
 * the leader syncs its own copy while the followers sync theirs; the first follower's
 * acknowledgement (plus the leader's own sync) commits; leader → client. That is the same four
 * network crossings and the same three fsyncs on one disk as a WheelRaft (or SOFAJRaft) increment,
 * and nothing else. {@code --transport grpc} sends the same messages over gRPC streams instead
 * ({@link GrpcFloorRoles}): the floor for any library whose messages travel over gRPC.
 *
 * <p>What it is for: telling how much of a library's 1-in-flight latency is the library, and how
 * much is this machine (docs/benchmarks.md). Not run by CI.
 *
 * <pre>
 * java -cp "raft-bench/target/classes:$(cat raft-bench/target/bench.classpath)" io.wheelraft.bench.LatencyFloorProbe \
 *     [--count 20000] [--dir DIR] [--transport tcp|grpc]
 * </pre>
 */
public final class LatencyFloorProbe {

    static final int REQUEST_BYTES = 128; // about one AppendEntries with one 8-byte increment and its headers
    static final int ACK_BYTES = 8;
    static final long FILE_BYTES = 64L << 20;

    private LatencyFloorProbe() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("follower")) {
            runFollower(Integer.parseInt(args[1]), Path.of(args[2]));
            return;
        }
        if (args.length > 0 && args[0].equals("leader")) {
            runLeader(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), Path.of(args[4]));
            return;
        }
        if (args.length > 0 && args[0].equals("follower-grpc")) {
            GrpcFloorRoles.runFollower(Integer.parseInt(args[1]), Path.of(args[2]));
            return;
        }
        if (args.length > 0 && args[0].equals("leader-grpc")) {
            GrpcFloorRoles.runLeader(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), Path.of(args[4]));
            return;
        }
        int count = 20_000;
        boolean grpc = false;
        Path dir = Path.of(System.getProperty("java.io.tmpdir"), "wheelraft-floor-probe");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--count" -> count = Integer.parseInt(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                case "--transport" -> grpc = switch (args[++i]) {
                    case "tcp" -> false;
                    case "grpc" -> true;
                    default -> throw new IllegalArgumentException("--transport is tcp or grpc, was " + args[i]);
                };
                default -> throw new IllegalArgumentException("unknown option " + args[i] + "; usage: [--count N] [--dir DIR] [--transport tcp|grpc]");
            }
        }
        Files.createDirectories(dir);
        List<Integer> ports = ServerCluster.freePorts(3);
        List<Process> children = new ArrayList<>();
        try {
            String suffix = grpc ? "-grpc" : "";
            children.add(child("follower" + suffix, String.valueOf(ports.get(1)), dir.resolve("f1.log").toString()));
            children.add(child("follower" + suffix, String.valueOf(ports.get(2)), dir.resolve("f2.log").toString()));
            children.add(child("leader" + suffix, String.valueOf(ports.get(0)), String.valueOf(ports.get(1)), String.valueOf(ports.get(2)), dir.resolve("leader.log").toString()));
            Recorder recorder = new Recorder(count / 4);
            if (grpc) {
                GrpcFloorRoles.runClient(ports.get(0), count, recorder);
            } else {
                runClient(ports.get(0), count, recorder);
            }
            Histogram h = recorder.latencies;
            for (Process p : children) {
                p.waitFor(5, TimeUnit.SECONDS); // each reports its own sync times once its input closes
            }
            System.out.printf("floor of one replicated write over %s (%d increments after %d warm-up): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, p999 %.3f ms%n",
                    grpc ? "gRPC" : "TCP sockets", h.getTotalCount(), count / 4,
                    h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(90) / 1000.0,
                    h.getValueAtPercentile(99) / 1000.0, h.getValueAtPercentile(99.9) / 1000.0);
        } finally {
            children.forEach(Process::destroyForcibly);
        }
    }

    private static Process child(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xms256m", "-Xmx256m", "-cp", System.getProperty("java.class.path"), LatencyFloorProbe.class.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).inheritIO().start();
    }

    /** Sends {@code count / 4} warm-up increments, then {@code count} measured ones, one at a time. */
    private static void runClient(int leaderPort, int count, Recorder recorder) throws IOException {
        try (SocketChannel leader = connect(leaderPort)) {
            runClient(leader, count, recorder);
        }
    }

    private static void runClient(SocketChannel leader, int count, Recorder recorder) throws IOException {
        ByteBuffer request = ByteBuffer.allocateDirect(REQUEST_BYTES);
        ByteBuffer ack = ByteBuffer.allocateDirect(ACK_BYTES);
        for (int i = 0; i < count + count / 4; i++) {
            long start = System.nanoTime();
            request.clear().putLong(0, i);
            writeFully(leader, request);
            readFully(leader, ack.clear());
            if (ack.getLong(0) != i) {
                throw new IllegalStateException("answer for " + ack.getLong(0) + " while waiting for " + i);
            }
            recorder.record(i, System.nanoTime() - start);
        }
    }

    /** Latencies of the increments after the first {@code warmUp}. Used by one thread at a time. */
    static final class Recorder {
        final Histogram latencies = new Histogram(TimeUnit.SECONDS.toMicros(10), 3);
        private final long warmUp;

        Recorder(long warmUp) {
            this.warmUp = warmUp;
        }

        void record(long seq, long nanos) {
            if (seq >= warmUp) {
                latencies.recordValue(Math.max(1, TimeUnit.NANOSECONDS.toMicros(nanos)));
            }
        }
    }

    private static void runLeader(int port, int follower1, int follower2, Path file) throws IOException {
        SyncedLog log = new SyncedLog(file);
        SocketChannel[] followers = {connect(follower1), connect(follower2)};
        Selector acks = Selector.open();
        long[] acked = new long[followers.length];
        for (int f = 0; f < followers.length; f++) {
            followers[f].configureBlocking(false);
            followers[f].register(acks, SelectionKey.OP_READ, f);
            acked[f] = -1;
        }
        SocketChannel client = accept(port);
        ByteBuffer request = ByteBuffer.allocateDirect(REQUEST_BYTES);
        ByteBuffer ack = ByteBuffer.allocateDirect(ACK_BYTES);
        while (true) {
            if (!readFully(client, request.clear())) {
                log.report("leader");
                for (SocketChannel f : followers) {
                    f.close();
                }
                return;
            }
            long seq = request.getLong(0);
            for (SocketChannel f : followers) {
                writeFully(f, request.flip());
            }
            log.append(request.flip()); // the leader's own copy, while the followers sync theirs
            while (acked[0] < seq && acked[1] < seq) {
                acks.select();
                for (SelectionKey k : acks.selectedKeys()) {
                    int f = (Integer) k.attachment();
                    readFully(followers[f], ack.clear()); // followers answer one 8-byte ack at a time
                    acked[f] = ack.getLong(0);
                }
                acks.selectedKeys().clear();
            }
            writeFully(client, ack.clear().putLong(0, seq));
        }
    }

    private static void runFollower(int port, Path file) throws IOException {
        SyncedLog log = new SyncedLog(file);
        SocketChannel leader = accept(port);
        ByteBuffer request = ByteBuffer.allocateDirect(REQUEST_BYTES);
        ByteBuffer ack = ByteBuffer.allocateDirect(ACK_BYTES);
        while (readFully(leader, request.clear())) {
            long seq = request.getLong(0);
            log.append(request.flip());
            writeFully(leader, ack.clear().putLong(0, seq));
        }
        log.report("follower on port " + port);
    }

    /** A pre-sized file written in place and fdatasync'ed per append, so a sync writes only data. */
    static final class SyncedLog {
        private final FileChannel file;
        private final Histogram syncMicros = new Histogram(TimeUnit.SECONDS.toMicros(10), 3);
        private long position;

        SyncedLog(Path path) throws IOException {
            file = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
            for (long at = 0; at < FILE_BYTES; at += zeros.capacity()) {
                file.write(zeros.clear(), at);
            }
            file.force(true);
        }

        void append(ByteBuffer record) {
            if (position + record.remaining() > FILE_BYTES) {
                position = 0;
            }
            long start = System.nanoTime();
            try {
                position += file.write(record, position);
                file.force(false);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("append to the probe's log failed", e);
            }
            syncMicros.recordValue(Math.max(1, TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start)));
        }

        void report(String who) {
            // One write per line: the three processes share the terminal.
            System.out.print(String.format("  %s: write+fdatasync p50 %.3f ms, p99 %.3f ms over %d appends%n",
                    who, syncMicros.getValueAtPercentile(50) / 1000.0, syncMicros.getValueAtPercentile(99) / 1000.0, syncMicros.getTotalCount()));
        }
    }

    private static SocketChannel connect(int port) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                return c;
            } catch (IOException e) {
                if (attempt == 200) {
                    throw e;
                }
                try {
                    Thread.sleep(50); // the other process is still starting: retry its port for up to 10 s
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private static SocketChannel accept(int port) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", port));
            SocketChannel c = server.accept();
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            return c;
        }
    }

    private static void writeFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    /** False when the peer closed the connection before a whole message. */
    private static boolean readFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                return false;
            }
        }
        return true;
    }
}

package io.wheelraft.example.kv;

import io.wheelraft.client.CommandResult;
import io.wheelraft.client.ExactlyOnceStateMachine;
import io.wheelraft.client.QueryHandler;
import io.wheelraft.client.RaftClient;
import io.wheelraft.client.RaftClientService;
import io.wheelraft.client.ReadMode;
import io.wheelraft.client.Reply;
import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.Node;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.RaftGroupService;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;
import io.wheelraft.rpc.GrpcRaftTransport;
import io.wheelraft.storage.FileMetaStorage;
import io.wheelraft.storage.LocalSnapshotStorage;
import io.wheelraft.storage.RocksDbStore;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The complete key-value example of docs/embedding.md, compiled and run by the build
 * ({@code KeyValueExampleTest}) so the page stays true: three nodes in one process, writes, reads,
 * the leader killed, the cluster writing on, the old leader restarted and catching up, and a
 * snapshot. Run it with {@code java -cp wheelraft-counter.jar io.wheelraft.example.kv.KeyValueExample}.
 *
 * <p>Single-threaded driver; each node runs on WheelRaft's threads.
 */
public final class KeyValueExample {

    static final String GROUP = "kv";

    /**
     * The replicated map. Commands are {@code "key=value"} (UTF-8) and answer the previous value;
     * a query is a key and answers its value. No deduplication here: the library's
     * {@link ExactlyOnceStateMachine} hands each command over once.
     */
    static final class KvStateMachine extends StateMachineAdapter implements QueryHandler {
        private final Map<String, String> map = new TreeMap<>();

        @Override
        public void onApply(Iterator it) {
            while (it.hasNext()) {
                String command = StandardCharsets.UTF_8.decode(it.next()).toString();
                int eq = command.indexOf('=');
                if (eq < 0) {
                    it.setErrorAndRollback(Status.error(RaftError.STATE_MACHINE_ERROR, "entry %d is not key=value", it.index()));
                    return;
                }
                String previous = map.put(command.substring(0, eq), command.substring(eq + 1));
                if (it.done() instanceof CommandResult result) {
                    result.setResult(previous == null ? new byte[0] : previous.getBytes(StandardCharsets.UTF_8));
                }
            }
        }

        @Override
        public byte[] query(ByteBuffer key) {
            String value = map.get(StandardCharsets.UTF_8.decode(key).toString());
            return value == null ? new byte[0] : value.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public void onSnapshotSave(SnapshotWriter writer, Closure done) {
            Properties p = new Properties();
            p.putAll(map);
            try (OutputStream out = writer.addFile("kv.properties")) {
                p.store(out, null);
            } catch (IOException e) {
                done.run(Status.error(RaftError.STORAGE_ERROR, "kv snapshot: %s", e.getMessage()));
                return;
            }
            done.run(Status.ok());
        }

        @Override
        public boolean onSnapshotLoad(SnapshotReader reader) {
            Properties p = new Properties();
            try (InputStream in = reader.openFile("kv.properties")) {
                p.load(in);
            } catch (IOException e) {
                return false;
            }
            map.clear();
            p.forEach((k, v) -> map.put((String) k, (String) v));
            return true;
        }
    }

    /** One member: its port, storage, node and the client service on the same port. */
    static final class KvNode implements AutoCloseable {
        final PeerId self;
        private final RocksDbStore store;
        private final FileMetaStorage meta;
        private final LocalSnapshotStorage snapshots;
        private final GrpcRaftTransport transport;
        private final RaftGroupService group;
        final Node node;

        KvNode(Path dataDir, PeerId self, List<PeerId> peers) {
            this.self = self;
            store = RocksDbStore.open(dataDir.resolve("log"));
            meta = FileMetaStorage.open(dataDir.resolve(GROUP + "/meta"));
            snapshots = LocalSnapshotStorage.open(dataDir.resolve(GROUP + "/snapshot"));
            ExactlyOnceStateMachine stateMachine = new ExactlyOnceStateMachine(new KvStateMachine());
            RaftClientService clients = new RaftClientService();
            transport = GrpcRaftTransport.builder().listen(self.host(), self.port())
                    .addNonBlockingService(clients)      // the one call that serves RaftClient on this port
                    .start();
            NodeOptions options = new NodeOptions()
                    .electionTimeoutMs(1000)
                    .initialConfiguration(new Configuration(peers))
                    .stateMachine(stateMachine)           // the wrapper, not KvStateMachine itself
                    .logStorage(store.logStorage(GROUP))
                    .metaStorage(meta)
                    .snapshotStorage(snapshots);
            group = new RaftGroupService(GROUP, self, options, transport);
            node = group.start();
            transport.nodes().register(node);
            clients.addGroup(node, stateMachine);
        }

        /** Stops this member: its port closes, its node and storage shut down; the data stays. */
        @Override
        public void close() throws InterruptedException {
            transport.close();
            group.shutdown(10_000);
            snapshots.close();
            meta.close();
            store.close();
        }
    }

    private KeyValueExample() {
    }

    public static void main(String[] args) throws Exception {
        Path data = Files.createTempDirectory("wheelraft-kv");
        run(data, new int[] {free(), free(), free()}, System.out);
    }

    /** The tour; prints one line per step to {@code out}. */
    static void run(Path data, int[] ports, PrintStream out) throws Exception {
        List<PeerId> peers = new ArrayList<>();
        for (int port : ports) {
            peers.add(new PeerId("127.0.0.1", port));
        }
        List<String> endpoints = peers.stream().map(PeerId::endpoint).toList();
        KvNode[] nodes = new KvNode[3];
        for (int i = 0; i < 3; i++) {
            nodes[i] = new KvNode(data.resolve("node" + i), peers.get(i), peers);
        }
        try (RaftClient client = RaftClient.builder().endpoints(endpoints).groupId(GROUP).timeout(Duration.ofSeconds(20)).build()) {
            // Writes: the client finds the leader itself; each command is applied exactly once.
            client.submit(bytes("color=red"));
            out.println("previous color: '" + text(client.submit(bytes("color=blue"))) + "'");
            // Reads, consistency chosen per call.
            out.println("linearizable read: " + text(client.query(bytes("color"), ReadMode.LINEARIZABLE)));
            out.println("stale read (this client's writes included): " + text(client.query(bytes("color"), ReadMode.STALE)));

            // Kill the leader: the client follows the new one without the application noticing.
            int leader = indexOf(endpoints, client.leader());
            nodes[leader].close();
            out.println("killed the leader " + endpoints.get(leader));
            List<CompletableFuture<byte[]>> writes = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                writes.add(client.submitAsync(bytes("key" + i + "=" + i)));   // 100 independent calls in flight
            }
            CompletableFuture.allOf(writes.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            out.println("100 writes acknowledged by the new leader " + client.leader());

            // Restart the old leader from its data; it catches up from the others.
            nodes[leader] = new KvNode(data.resolve("node" + leader), peers.get(leader), peers);
            Reply last = client.submit(bytes("color=green"), Duration.ofSeconds(20));
            // A stale read with the write's index as its minimum, at the restarted member alone.
            try (RaftClient atRestarted = RaftClient.builder().endpoints(List.of(endpoints.get(leader))).groupId(GROUP).build()) {
                Reply read = atRestarted.query(bytes("color"), ReadMode.STALE, last.index(), Duration.ofSeconds(20));
                out.println("the restarted member has caught up: color=" + text(read.result()));
            }

            // A snapshot of every member: their logs are compacted; the retry table goes with the data.
            for (KvNode n : nodes) {
                CompletableFuture<Status> done = new CompletableFuture<>();
                n.node.snapshot(done::complete);
                out.println("snapshot of " + n.self.endpoint() + ": " + (done.get(30, TimeUnit.SECONDS).isOk() ? "ok" : done.get()));
            }
            out.println("key42 = " + text(client.query(bytes("key42"), ReadMode.LINEARIZABLE)));
        } finally {
            for (KvNode n : nodes) {
                n.close();
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static int indexOf(List<String> endpoints, String endpoint) {
        int i = endpoints.indexOf(endpoint);
        if (i < 0) {
            throw new IllegalStateException("the client names no known leader: " + endpoint);
        }
        return i;
    }

    private static int free() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}

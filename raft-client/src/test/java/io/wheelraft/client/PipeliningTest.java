package io.wheelraft.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Many independent calls from many threads share one stream per server, under flow control. */
class PipeliningTest {

    @TempDir
    Path dir;

    @Test
    void twoThousandOutstandingCallsFromEightThreadsShareOneStreamAndAllComplete() throws Exception {
        // The service reads a stream only while 16 of its calls are unanswered, so most of the 2,000
        // wait in the client until the server reads again: flow control, not a growing server queue.
        try (ClientTestCluster cluster = new ClientTestCluster(dir, 3, ExactlyOnceStateMachine.Options.defaults(), o -> { }, 16)) {
            int leader = cluster.awaitLeader();
            long streamsBefore = cluster.member(leader).service.streamsOpened();
            try (RaftClient client = cluster.client().build()) {
                client.leaderIs(cluster.member(leader).id.endpoint());
                List<CompletableFuture<byte[]>> calls = java.util.Collections.synchronizedList(new ArrayList<>());
                List<Thread> threads = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    int base = t * 250;
                    Thread th = new Thread(() -> {
                        for (int i = 0; i < 250; i++) {
                            calls.add(client.submitAsync(Ledger.command(base + i)));
                        }
                    });
                    threads.add(th);
                    th.start();
                }
                for (Thread th : threads) {
                    th.join();
                }
                for (CompletableFuture<byte[]> c : calls) {
                    c.get(30, TimeUnit.SECONDS);
                }
                assertEquals(2000, calls.size());
            }
            assertEquals(1, cluster.member(leader).service.streamsOpened() - streamsBefore, "one stream carried every call");
            // On a loaded machine leadership may move during the run; the first leader then applies
            // the last entries a little after the client's answers came from the new one.
            cluster.awaitConverged();
            assertEquals(2000, cluster.member(leader).ledger.total());
            assertEquals(1, cluster.member(leader).ledger.maxApplications());
        }
    }
}

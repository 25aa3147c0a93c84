package io.wheelraft.client;

import io.wheelraft.rpc.RpcOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Clients sharing one {@link RaftClientTransport}: one stream per server for all, and who closes what. */
class RaftClientTransportTest {

    @TempDir
    Path dir;

    @Test
    void clientsOnOneTransportShareOneStreamPerServerAndClosingOneLeavesTheOthers() throws Exception {
        try (ClientTestCluster cluster = new ClientTestCluster(dir);
             RaftClientTransport transport = RaftClientTransport.create()) {
            int leader = cluster.awaitLeader();
            long streamsBefore = cluster.member(leader).service.streamsOpened();
            RaftClient first = cluster.client().transport(transport).clientId("first").build();
            RaftClient second = cluster.client().transport(transport).clientId("second").build();
            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                calls.add((i % 2 == 0 ? first : second).submitAsync(Ledger.command(i)));
            }
            for (CompletableFuture<byte[]> c : calls) {
                c.get(30, TimeUnit.SECONDS);
            }
            assertEquals(1, cluster.member(leader).service.streamsOpened() - streamsBefore, "both clients' calls in one stream");
            assertTrue(transport.connectionCount() <= 3, "connections: " + transport.connectionCount());

            first.close();
            second.submit(Ledger.command(100)); // the shared transport stays open for the other client
            assertThrows(IllegalStateException.class, () -> first.submitAsync(Ledger.command(101)));

            cluster.awaitConverged();
            assertEquals(101, cluster.member(leader).ledger.total());
            assertEquals(1, cluster.member(leader).ledger.maxApplications());
            second.close();
        }
    }

    @Test
    void closingTheTransportEndsTheCallsOfEveryClientOnIt() throws Exception {
        RaftClientTransport transport = RaftClientTransport.create();
        // Nobody listens on the endpoint: the call keeps retrying until something ends it.
        RaftClient client = RaftClient.builder().endpoints(List.of("127.0.0.1:1")).groupId("g").transport(transport).build();
        CompletableFuture<byte[]> call = client.submitAsync(Ledger.command(1));
        transport.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
        assertInstanceOf(NotAppliedException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("transport was closed"), e.getCause().getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> RaftClient.builder().endpoints(List.of("127.0.0.1:1")).groupId("g").transport(transport).build());
    }

    @Test
    void channelSettingsBelongToTheSharedTransport() {
        try (RaftClientTransport transport = RaftClientTransport.create()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RaftClient.builder()
                    .endpoints(List.of("127.0.0.1:1")).groupId("g").transport(transport).rpcOptions(RpcOptions.defaults()).build());
            assertTrue(e.getMessage().contains("RaftClientTransport"), e.getMessage());
        }
    }
}

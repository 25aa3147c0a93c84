package io.wheelraft.rpc;

import io.wheelraft.core.PeerId;

import java.util.concurrent.TimeUnit;

/**
 * A stand-in leader in its own JVM, for the kill test: replicates to the follower named on the
 * command line until it is killed. Prints {@code REPLICATING host:port} once the first append
 * was answered.
 */
public final class PeerProcessMain {

    private PeerProcessMain() {
    }

    public static void main(String[] args) throws Exception {
        PeerId follower = PeerId.parse(args[0]);
        GrpcRaftTransport transport = GrpcRaftTransport.builder().listen("127.0.0.1", 0).start();
        PeerId self = PeerId.parse(transport.endpoint());
        transport.appendEntries(follower, Requests.append(self, follower, 1, 1, 16), 10_000).get(10, TimeUnit.SECONDS);
        System.out.println("REPLICATING " + transport.endpoint());
        System.out.flush();
        for (long seq = 2; ; seq++) {
            transport.appendEntries(follower, Requests.append(self, follower, seq, 1, 16), 10_000).get(10, TimeUnit.SECONDS);
            TimeUnit.MILLISECONDS.sleep(20); // a heartbeat interval, not a wait for a condition
        }
    }
}

package io.wheelraft.rpc;

import com.google.protobuf.ByteString;
import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AppendEntriesRequest;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.wheelraft.core.spi.TransportException;

/** Builders and helpers shared by the transport tests. */
final class Requests {

    static final String GROUP = "counter";

    private Requests() {
    }

    static AppendEntriesRequest append(PeerId from, PeerId to, long sequence, int entries, int payloadBytes) {
        AppendEntriesRequest.Builder b = AppendEntriesRequest.newBuilder()
                .setGroupId(GROUP).setServerId(from.toString()).setPeerId(to.toString())
                .setTerm(3).setPrevLogIndex(sequence * entries).setPrevLogTerm(3).setSequence(sequence);
        ByteString payload = ByteString.copyFrom(new byte[payloadBytes]);
        for (int i = 0; i < entries; i++) {
            b.addEntries(LogEntry.newBuilder().setTerm(3).setIndex(sequence * entries + i + 1)
                    .setType(EntryType.ENTRY_TYPE_DATA).setData(payload));
        }
        return b.build();
    }

    static PeerId peerAt(GrpcRaftTransport t) {
        return PeerId.parse(t.endpoint());
    }

    /** Waits (bounded) for a future that must fail and returns its TransportException. */
    static TransportException failure(CompletableFuture<?> f) throws InterruptedException, TimeoutException {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TransportException te) {
                return te;
            }
            throw new AssertionError("expected a TransportException, got " + e.getCause(), e.getCause());
        }
        throw new AssertionError("expected the call to fail, it succeeded");
    }

    static <T> T answer(CompletableFuture<T> f) throws Exception {
        return f.get(10, TimeUnit.SECONDS);
    }
}

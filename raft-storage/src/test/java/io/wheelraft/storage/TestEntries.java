package io.wheelraft.storage;

import com.google.protobuf.ByteString;
import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Builds log entries for tests. */
final class TestEntries {

    private TestEntries() {
    }

    static LogEntry data(long index, long term, byte[] payload) {
        return LogEntry.newBuilder().setIndex(index).setTerm(term).setType(EntryType.ENTRY_TYPE_DATA)
                .setData(ByteString.copyFrom(payload)).build();
    }

    static LogEntry data(long index, long term) {
        return data(index, term, ("entry-" + index + "-term-" + term).getBytes());
    }

    static LogEntry conf(long index, long term, String... peers) {
        return LogEntry.newBuilder().setIndex(index).setTerm(term).setType(EntryType.ENTRY_TYPE_CONFIGURATION)
                .setConfiguration(ConfigurationEntry.newBuilder().addAllPeers(List.of(peers))).build();
    }

    /** Data entries {@code from..to} inclusive, of {@code term}. */
    static List<LogEntry> range(long from, long to, long term) {
        List<LogEntry> out = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            out.add(data(i, term));
        }
        return out;
    }

    /** A deterministic payload of {@code size} bytes for entry {@code index} (seeded by the index). */
    static byte[] payload(long index, int size) {
        byte[] b = new byte[size];
        new Random(index * 31 + size).nextBytes(b);
        return b;
    }
}

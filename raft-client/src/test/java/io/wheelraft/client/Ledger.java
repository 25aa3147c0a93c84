package io.wheelraft.client;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * A test state machine with no deduplication of its own: each command is an 8-byte id; applying
 * it counts how often that id was applied and answers the number of commands applied so far. A
 * query answers that number. So a doubled command shows as a count of 2.
 */
final class Ledger extends StateMachineAdapter implements QueryHandler {

    private final Map<Long, Integer> applications = new HashMap<>();
    private long total;

    static byte[] command(long id) {
        return ByteBuffer.allocate(8).putLong(id).array();
    }

    static long decode(byte[] answer) {
        return ByteBuffer.wrap(answer).getLong();
    }

    synchronized long total() {
        return total;
    }

    synchronized int applications(long id) {
        return applications.getOrDefault(id, 0);
    }

    synchronized int maxApplications() {
        return applications.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    }

    @Override
    public synchronized void onApply(Iterator it) {
        while (it.hasNext()) {
            ByteBuffer data = it.next();
            applications.merge(data.getLong(data.position()), 1, Integer::sum);
            total++;
            if (it.done() instanceof CommandResult r) {
                r.setResult(command(total));
            }
        }
    }

    @Override
    public synchronized byte[] query(ByteBuffer query) {
        return command(total);
    }

    @Override
    public void onSnapshotSave(SnapshotWriter writer, Closure done) {
        try (DataOutputStream out = new DataOutputStream(writer.addFile("ledger"))) {
            synchronized (this) {
                out.writeLong(total);
                out.writeInt(applications.size());
                for (Map.Entry<Long, Integer> e : applications.entrySet()) {
                    out.writeLong(e.getKey());
                    out.writeInt(e.getValue());
                }
            }
        } catch (IOException e) {
            done.run(Status.error(RaftError.STATE_MACHINE_ERROR, "ledger snapshot: %s", e));
            return;
        }
        done.run(Status.ok());
    }

    @Override
    public boolean onSnapshotLoad(SnapshotReader reader) {
        try (DataInputStream in = new DataInputStream(reader.openFile("ledger"))) {
            synchronized (this) {
                total = in.readLong();
                applications.clear();
                int n = in.readInt();
                for (int i = 0; i < n; i++) {
                    applications.put(in.readLong(), in.readInt());
                }
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}

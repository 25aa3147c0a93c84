package io.wheelraft.core.node;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.consensus.Ready;
import io.wheelraft.core.spi.StorageException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Records every sink action as one line, in order; can be told to fail the meta write. */
class RecordingSink implements ReadyCarrier.Sink {
    final List<String> actions = new ArrayList<>();
    final List<Ready.LogWrite> writes = new ArrayList<>();
    boolean failMeta;

    @Override
    public CompletableFuture<Void> persistHardState(long term, PeerId votedFor) {
        if (failMeta) {
            return CompletableFuture.failedFuture(new StorageException("meta write failed: disk full"));
        }
        actions.add("hardState " + term + " " + votedFor);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void persistRepairing(boolean repairing) {
        if (failMeta) {
            throw new StorageException("meta write failed: disk full");
        }
        actions.add("repairing " + repairing);
    }

    @Override
    public void handle(Ready.Event event) {
        actions.add("event " + event.getClass().getSimpleName());
    }

    @Override
    public void writeLog(Ready.LogWrite write) {
        writes.add(write);
        actions.add("log " + write.entries().get(write.entries().size() - 1).getIndex());
    }

    @Override
    public void send(Ready.Message message) {
        actions.add("send " + message.getClass().getSimpleName() + " " + message.to());
    }

    @Override
    public void scheduleElectionRetry() {
        actions.add("retry");
    }

    @Override
    public void scheduleWake(long atMs) {
        actions.add("wake " + atMs);
    }

    long count(String prefix) {
        return actions.stream().filter(a -> a.startsWith(prefix)).count();
    }
}

package io.wheelraft.core.node;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.Status;
import io.wheelraft.proto.LogEntry;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.NoSuchElementException;

/** The {@link Iterator} handed to {@code onApply}: a batch of committed data entries and their closures. */
final class ApplyIterator implements Iterator {

    private final List<LogEntry> entries;
    private final List<Closure> closures;
    private int position = -1;
    private Status error;

    ApplyIterator(List<LogEntry> entries, List<Closure> closures) {
        this.entries = entries;
        this.closures = closures;
    }

    @Override
    public boolean hasNext() {
        return error == null && position + 1 < entries.size();
    }

    @Override
    public ByteBuffer next() {
        if (!hasNext()) {
            throw new NoSuchElementException("no more entries in this batch");
        }
        position++;
        return data();
    }

    private LogEntry current() {
        if (position < 0) {
            throw new IllegalStateException("call next() before reading the current entry");
        }
        return entries.get(position);
    }

    @Override
    public long index() {
        return current().getIndex();
    }

    @Override
    public long term() {
        return current().getTerm();
    }

    @Override
    public ByteBuffer data() {
        return current().getData().asReadOnlyByteBuffer();
    }

    @Override
    public Closure done() {
        current();
        return closures.get(position);
    }

    @Override
    public void setErrorAndRollback(Status error) {
        if (error == null || error.isOk()) {
            throw new IllegalArgumentException("setErrorAndRollback needs an error status, got " + error);
        }
        this.error = error;
    }

    /** How many entries the state machine consumed (all of them unless it stopped with an error). */
    int consumed() {
        return error == null ? entries.size() : position;
    }

    Status error() {
        return error;
    }
}

package io.wheelraft.example;

import io.wheelraft.core.Closure;

/**
 * The closure of one increment proposed on the leader. {@link CounterStateMachine} finds it through
 * {@code Iterator.done()}, records what applying the command did, then runs it with OK; the node
 * runs it with an error if the entry was not applied here. Completed once, on a node thread.
 */
public abstract class IncrClosure implements Closure {

    /** What applying the command did. */
    public enum Result {
        /** Added for the first time. */
        APPLIED,
        /** A retry of the client's last applied command: not added again; the value is the first answer's. */
        DUPLICATE,
        /** Older than the client's last applied command: ignored; the client abandoned it long ago. */
        STALE
    }

    private volatile Result result;
    private volatile long value;

    void setResult(Result result, long value) {
        this.result = result;
        this.value = value;
    }

    /** Set before {@link #run} is called with OK; null otherwise. */
    public Result result() {
        return result;
    }

    /** The value after the increment (valid with APPLIED or DUPLICATE). */
    public long value() {
        return value;
    }
}

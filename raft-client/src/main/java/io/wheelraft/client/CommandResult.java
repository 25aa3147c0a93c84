package io.wheelraft.client;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Status;

/**
 * What {@link io.wheelraft.core.Iterator#done()} returns, on every member, for a command that came
 * through {@link RaftClient}: the state machine hands its answer to the client with
 * {@link #setResult}. The library remembers the answer in the retry table, so a retried command
 * gets the same answer without reaching the state machine again. Running it (SOFAJRaft style) is
 * allowed and optional.
 *
 * <p>Used on the apply thread only.
 */
public final class CommandResult implements Closure {

    private static final byte[] EMPTY = new byte[0];

    private byte[] result = EMPTY;
    private Status status = Status.ok();

    CommandResult() {
    }

    /** The answer the client receives for this command (empty when never set). */
    public void setResult(byte[] result) {
        this.result = result == null ? EMPTY : result;
    }

    public byte[] result() {
        return result;
    }

    /** Optional: a state machine that runs its closures may run this one too; the status is kept for the caller. */
    @Override
    public void run(Status status) {
        this.status = status == null ? Status.ok() : status;
    }

    Status status() {
        return status;
    }
}

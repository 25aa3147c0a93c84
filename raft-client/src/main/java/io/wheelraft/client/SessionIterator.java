package io.wheelraft.client;

import io.wheelraft.client.proto.SessionCommand;
import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Status;

import java.nio.ByteBuffer;
import java.util.NoSuchElementException;

/**
 * The view of a batch of committed entries that the user's state machine gets: client commands
 * the retry table has already answered are answered here and skipped, so the user sees each
 * command once; for the others it sees the command's own bytes and a {@link CommandResult} as
 * {@link #done()}. Entries not written by the library (a direct {@code Node.apply}) pass through
 * unchanged with their own closure. Used on the apply thread, during one {@code onApply}.
 */
final class SessionIterator implements Iterator {

    private final Iterator outer;
    private final RetryTable table;
    private ByteBuffer current;
    private Closure currentDone;
    /** The command being handed to the user, recorded when the user moves past it. */
    private SessionCommand currentCommand;
    private CommandResult currentResult;
    private Closure currentProposal;
    private long currentIndex;
    private boolean ready;
    private boolean failed;

    SessionIterator(Iterator outer, RetryTable table) {
        this.outer = outer;
        this.table = table;
    }

    @Override
    public boolean hasNext() {
        if (ready) {
            return true;
        }
        finishCurrent();
        while (!failed && outer.hasNext()) {
            ByteBuffer data = outer.next();
            if (!SessionCodec.isSessionCommand(data)) {
                current = data;
                currentDone = outer.done();
                ready = true;
                return true;
            }
            SessionCommand command;
            try {
                command = SessionCodec.decode(data);
            } catch (IllegalArgumentException e) {
                setErrorAndRollback(Status.error(RaftError.STATE_MACHINE_ERROR, "entry %d: %s", outer.index(), e.getMessage()));
                return false;
            }
            RetryTable.Verdict verdict = table.check(command);
            Closure proposal = outer.done();
            if (verdict.kind() != RetryTable.Kind.NEW) {
                if (proposal instanceof ProposalClosure p) {
                    p.answered(verdict.kind(), verdict.result(), verdict.index());
                }
                if (proposal != null) {
                    proposal.run(Status.ok());
                }
                continue;
            }
            currentCommand = command;
            currentResult = new CommandResult();
            currentProposal = proposal;
            currentIndex = outer.index();
            current = command.getPayload().asReadOnlyByteBuffer();
            currentDone = currentResult;
            ready = true;
            return true;
        }
        return false;
    }

    @Override
    public ByteBuffer next() {
        if (!hasNext()) {
            throw new NoSuchElementException("no more entries in this batch");
        }
        ready = false;
        return current;
    }

    /** Records the answer of the command the user just applied and answers its proposer. */
    void finishCurrent() {
        if (currentCommand == null) {
            return;
        }
        SessionCommand command = currentCommand;
        CommandResult result = currentResult;
        Closure proposal = currentProposal;
        currentCommand = null;
        currentResult = null;
        currentProposal = null;
        table.record(command.getClientId(), command.getSequence(), result.result(), currentIndex);
        if (proposal instanceof ProposalClosure p) {
            p.answered(RetryTable.Kind.NEW, result.result(), currentIndex);
        }
        if (proposal != null) {
            proposal.run(result.status());
        }
    }

    @Override
    public long index() {
        return outer.index();
    }

    @Override
    public long term() {
        return outer.term();
    }

    @Override
    public ByteBuffer data() {
        return current;
    }

    @Override
    public Closure done() {
        return currentDone;
    }

    @Override
    public void setErrorAndRollback(Status error) {
        failed = true;
        currentCommand = null; // not applied: its proposer hears the error from the node
        outer.setErrorAndRollback(error);
    }
}

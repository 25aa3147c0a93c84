package io.wheelraft.core.consensus;

import java.util.ArrayList;
import java.util.List;

/**
 * The memberships recorded in the log, newest last. The newest one is in effect as soon as it is
 * appended, committed or not (Raft §6); a truncation that removes it reverts to the one before.
 * Owned by the node's lane.
 */
public final class MembershipLog {

    private final List<Membership> history = new ArrayList<>();

    /** Starts from a bootstrap membership (from a snapshot, or the options; index 0 for the latter). */
    public MembershipLog(Membership base) {
        history.add(base);
    }

    public Membership current() {
        return history.get(history.size() - 1);
    }

    public void add(Membership m) {
        history.add(m);
    }

    /** Replaces the whole history with {@code base} (a snapshot from the leader replaced the log). */
    public void reset(Membership base) {
        history.clear();
        history.add(base);
    }

    /**
     * Drops memberships introduced after {@code lastKept}; the base one always stays.
     *
     * @return true if one was dropped (an earlier one is in effect again)
     */
    public boolean truncateAfter(long lastKept) {
        boolean dropped = false;
        while (history.size() > 1 && current().index() > lastKept) {
            history.remove(history.size() - 1);
            dropped = true;
        }
        return dropped;
    }
}

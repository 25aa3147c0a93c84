package io.wheelraft.core;

/** What a node currently is in its group. */
public enum Role {
    FOLLOWER, CANDIDATE, LEADER, LEARNER,
    /**
     * A follower fenced after a storage fault: it may lack entries it acknowledged, so it grants
     * no votes, never campaigns and serves no reads; it takes entries from the leader until the
     * leader says its log holds everything it may have acknowledged, then becomes a follower.
     */
    REPAIRING,
    /** Stopped for good (until restart) after a storage or apply failure; answers nothing. */
    ERROR,
    SHUTDOWN;

    /** Lower-case name, as the counter's {@code status} command prints it. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}

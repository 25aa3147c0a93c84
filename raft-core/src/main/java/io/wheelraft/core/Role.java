package io.wheelraft.core;

/** What a node currently is in its group. */
public enum Role {
    FOLLOWER, CANDIDATE, LEADER, LEARNER,
    /** Stopped applying after an unrecoverable error; answers no votes and accepts no tasks. */
    ERROR,
    SHUTDOWN;

    /** Lower-case name, as the counter's {@code status} command prints it. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}

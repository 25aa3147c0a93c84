package io.wheelraft.client;

/** How a {@link RaftClient} query is served; chosen per call. */
public enum ReadMode {
    /**
     * ReadIndex: reflects every write acknowledged before the read began; served by the leader or
     * (if asked) a follower, after a heartbeat round to a quorum whatever the servers'
     * {@code NodeOptions.readOnlyOption}.
     */
    LINEARIZABLE,
    /**
     * Served by the leader only, whatever the servers' {@code NodeOptions.readOnlyOption}: no quorum
     * round while the leader's lease is valid (safe while clock drift stays under
     * {@code NodeOptions.leaseClockDriftMs}), a round otherwise; a leader that lost its lease and
     * cannot reach a quorum does not serve it.
     */
    LEASE,
    /** Any member that has applied at least the given index (by default the last index this client saw): fast, possibly stale. */
    STALE
}

package io.wheelraft.client;

/** How a {@link RaftClient} query is served; chosen per call. */
public enum ReadMode {
    /** ReadIndex: reflects every write acknowledged before the read began; served by the leader or (if asked) a follower. */
    LINEARIZABLE,
    /**
     * Served by the leader; with {@code NodeOptions.readOnlyOption(LEASE)} on the servers it skips the
     * quorum round while the leader's lease lasts (safe while clock drift stays bounded), otherwise it
     * is a ReadIndex read.
     */
    LEASE,
    /** Any member that has applied at least the given index (by default the last index this client saw): fast, possibly stale. */
    STALE
}

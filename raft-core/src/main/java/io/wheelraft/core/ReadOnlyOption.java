package io.wheelraft.core;

/** How the leader confirms a linearizable read. */
public enum ReadOnlyOption {
    /** ReadIndex: a heartbeat round to a quorum confirms leadership (always safe). */
    READ_INDEX,
    /**
     * Lease: served without a round trip while the leader's lease is valid. Safe only while clock
     * drift between nodes stays below {@link NodeOptions#leaseClockDriftMs()}.
     */
    LEASE
}

package io.wheelraft.core.consensus;

import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;

/**
 * The settings the consensus machine itself reads (a slice of {@link io.wheelraft.core.NodeOptions}).
 *
 * @param connectionLostGraceMs after the transport reports the leader's connection broke, how long
 *                              with no word from it before it counts as lost
 * @param witness               this node runs as a witness ({@link NodeOptions#witness()}, see {@link WitnessRules})
 * @param electionPriority      this node's own election priority ({@link NodeOptions#electionPriority()}):
 *                              in effect while the configuration sets none for it (see {@link ElectionPriority})
 */
public record RaftConfig(String groupId, PeerId self, int electionTimeoutMs, int connectionLostGraceMs,
                         int maxInflightAppends, int maxEntriesPerAppend, int maxBytesPerAppend,
                         boolean leaseReads, int leaseClockDriftMs, boolean witness, int electionPriority) {

    /** A data node's settings (not a witness), with the default election priority. */
    public RaftConfig(String groupId, PeerId self, int electionTimeoutMs, int connectionLostGraceMs,
                      int maxInflightAppends, int maxEntriesPerAppend, int maxBytesPerAppend,
                      boolean leaseReads, int leaseClockDriftMs) {
        this(groupId, self, electionTimeoutMs, connectionLostGraceMs, maxInflightAppends, maxEntriesPerAppend,
                maxBytesPerAppend, leaseReads, leaseClockDriftMs, false);
    }

    /** With the default election priority. */
    public RaftConfig(String groupId, PeerId self, int electionTimeoutMs, int connectionLostGraceMs,
                      int maxInflightAppends, int maxEntriesPerAppend, int maxBytesPerAppend,
                      boolean leaseReads, int leaseClockDriftMs, boolean witness) {
        this(groupId, self, electionTimeoutMs, connectionLostGraceMs, maxInflightAppends, maxEntriesPerAppend,
                maxBytesPerAppend, leaseReads, leaseClockDriftMs, witness, NodeOptions.DEFAULT_ELECTION_PRIORITY);
    }

    public static RaftConfig from(String groupId, PeerId self, NodeOptions o) {
        return new RaftConfig(groupId, self, o.electionTimeoutMs(), o.connectionLostGraceMs(),
                o.maxInflightAppends(), o.maxEntriesPerAppend(), o.maxBytesPerAppend(),
                o.readOnlyOption() == io.wheelraft.core.ReadOnlyOption.LEASE, o.leaseClockDriftMs(), o.witness(), o.electionPriority());
    }

    /** The same settings with another own election priority (the node's options say it; tests use this). */
    public RaftConfig withElectionPriority(int priority) {
        return new RaftConfig(groupId, self, electionTimeoutMs, connectionLostGraceMs, maxInflightAppends, maxEntriesPerAppend,
                maxBytesPerAppend, leaseReads, leaseClockDriftMs, witness, priority);
    }

    /**
     * How long after a quorum acknowledged a heartbeat the leader may still serve lease reads.
     * Voters refuse other candidates for the election timeout after hearing from the leader, and
     * for at least half the grace period after its last heartbeat when they saw its connection
     * break ({@link #brokenLeaderHoldMs()}), so the lease is the shorter of the two, minus the
     * allowed clock drift.
     */
    public long leaseMs() {
        return Math.min(electionTimeoutMs, connectionLostGraceMs / 2) - (long) leaseClockDriftMs;
    }

    /**
     * How long after a lease read was asked for the leader keeps counting its heartbeats toward
     * the lease (30 election timeouts). Outside it, heartbeats carry no lease, so a voter that
     * learns a dead leader's process is gone backs a candidate without waiting one out.
     */
    public long leaseArmedForMs() {
        return 30L * electionTimeoutMs;
    }

    /**
     * A voter that saw its leader's connection break backs a candidate against it no earlier than
     * this after the last heartbeat-timer heartbeat it received: half the grace (by default one
     * heartbeat interval) plus 2% of the election timeout. Half the grace is what the leader's
     * lease ({@link #leaseMs()}) relies on; the margin lets a live leader's next heartbeat arrive
     * first when a connection only flapped, so a flap on several links at once elects no one.
     */
    public long brokenLeaderHoldMs() {
        return connectionLostGraceMs / 2 + Math.max(2, electionTimeoutMs / 50L);
    }

    /**
     * How long after its start a voter of a fresh group (term 0, empty log, never led) that is not
     * the one chosen to campaign first leaves the first campaign to that one while its process is
     * not reported lost: three election timeouts. Processes that start thousands of groups each
     * start them in the same order but seconds apart, and a voter whose own timer ran out first
     * could win the group's first election, only to hand leadership to the chosen, preferred
     * voter right after (a second election), or split the vote with its campaign.
     */
    public long freshFirstCampaignGraceMs() {
        return 3L * electionTimeoutMs;
    }

    /**
     * The gap between two survivors' turns to campaign (10% of the election timeout, at least
     * 1 ms): the next one starts only if the one before could not even ask (it died too, or its
     * log is behind and a voter ahead did not take over). It costs nothing when the first turn
     * succeeds, and must exceed the spread of the break reports plus a pre-vote's delivery, which
     * took up to 160 ms to a freshly restarted process in the chaos runs (3% of T tied then).
     */
    public long failoverSlotMs() {
        return Math.max(1, electionTimeoutMs / 10L);
    }

    /**
     * How long a voter that has not seen the leader lost yet holds a pre-vote answer, waiting for
     * its own break report (or its own election timeout to pass), before refusing (5% of T).
     */
    public long voteConfirmWindowMs() {
        return Math.max(1, electionTimeoutMs / 20L);
    }

    /**
     * After a silent leader's election timeout (counted from the last contact), how long the first
     * survivor waits before its pre-vote: voters heard the last heartbeat up to one message
     * latency later, and they hold the answer the rest of the way (1% of T, at least 1 ms).
     */
    public long silentLeaderMarginMs() {
        return Math.max(1, electionTimeoutMs / 100L);
    }
}

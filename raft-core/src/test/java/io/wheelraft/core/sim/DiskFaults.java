package io.wheelraft.core.sim;

import io.wheelraft.core.Role;
import io.wheelraft.core.spi.StorageException;

import java.util.Random;
import java.util.function.IntPredicate;

/**
 * Random disk faults for the random-fault simulations, on a bounded number of members at a time
 * (a minority unless the caller sets a tighter bound; a member counts from the fault until it is
 * repaired and votes again): a synced log tail
 * lost at restart, an entry that no longer reads back, failed log or meta writes (a full or
 * failing disk), a background storage failure, and the operator repairing a failed disk (the
 * member restarts on it, fenced, and is repaired from the leader). Simulation thread only.
 */
final class DiskFaults {

    private final SimCluster c;
    /** The member's disk is bad until {@link SimCluster#repairDisk}: failing writes or a corrupt entry. */
    private final boolean[] diskBad;
    /** A tail loss is armed and takes effect when the member next starts. */
    private final boolean[] tailLossArmed;
    /**
     * The member was last seen stopped or repairing. A crash does not end that (the fence is
     * durable, and the member is still repairing when it starts again), so a member down while
     * fenced still counts against the minority; otherwise a second member could be damaged then,
     * and with a majority fenced no leader can ever be elected (by design: see docs/storage.md).
     */
    private final boolean[] fenced;
    /** How many members may be faulty at once. */
    private final int maxFaulty;

    /** Which members may be damaged at all. */
    private final IntPredicate mayDamage;

    /** Faults on at most a minority of all the cluster's nodes (every node a voter). */
    DiskFaults(SimCluster c) {
        this(c, (c.size() - 1) / 2, i -> true);
    }

    /**
     * Faults on at most {@code maxFaulty} nodes at a time, each one that {@code mayDamage}
     * accepts: with membership changes, what is a minority depends on the configuration of the
     * moment, and with a witness, which holds no data, a damaged data member may have held the
     * only copy of entries the witness acknowledged; so the caller bounds the faults for every
     * configuration it lets the cluster reach.
     */
    DiskFaults(SimCluster c, int maxFaulty, IntPredicate mayDamage) {
        this.c = c;
        this.maxFaulty = maxFaulty;
        this.mayDamage = mayDamage;
        this.diskBad = new boolean[c.size()];
        this.tailLossArmed = new boolean[c.size()];
        this.fenced = new boolean[c.size()];
    }

    private boolean faulty(int i) {
        if (c.isUp(i)) {
            tailLossArmed[i] = false; // it started on the damaged log: the role tells the rest
            Role role = c.node(i).status().role();
            fenced[i] = role == Role.ERROR || role == Role.REPAIRING;
        }
        return diskBad[i] || tailLossArmed[i] || fenced[i];
    }

    private int faultyCount() {
        int n = 0;
        for (int i = 0; i < c.size(); i++) {
            if (faulty(i)) {
                n++;
            }
        }
        return n;
    }

    void inject(Random r) {
        int victim = r.nextInt(c.size());
        if (faulty(victim)) {
            if (diskBad[victim] && r.nextBoolean()) {
                repair(victim);
            }
            return;
        }
        if (!mayDamage.test(victim) || faultyCount() + 1 > maxFaulty) {
            return; // not this member, or a majority (of every configuration) must keep sound disks
        }
        SimLogStorage log = c.simLog(victim);
        switch (r.nextInt(5)) {
            case 0 -> { // the WAL loses synced records: found at the next open
                long first = log.firstLogIndex();
                long last = log.lastLogIndex();
                long keep = first - 1 + (last >= first ? (long) r.nextInt((int) Math.min(Integer.MAX_VALUE, last - first + 2)) : 0);
                c.crash(victim, r.nextBoolean());
                log.loseTailAtRestart(keep);
                tailLossArmed[victim] = true;
                if (r.nextBoolean()) {
                    c.restart(victim);
                }
            }
            case 1 -> { // a block goes bad: reading the entry fails
                long first = log.firstLogIndex();
                long last = log.lastLogIndex();
                if (last >= first) {
                    log.corrupt(first + r.nextInt((int) Math.min(Integer.MAX_VALUE, last - first + 1)));
                    diskBad[victim] = true;
                }
            }
            case 2 -> {
                log.disk().faults().failAllWrites(new StorageException("sim n" + (victim + 1) + " log: write: No space left on device"));
                diskBad[victim] = true;
            }
            case 3 -> {
                c.metaStorage(victim).faults().failAllWrites(new StorageException("sim n" + (victim + 1) + " raft_meta: fsync: Input/output error"));
                diskBad[victim] = true;
            }
            default -> {
                log.failInBackground(new StorageException("sim n" + (victim + 1) + " log: background flush: No space left on device"));
                diskBad[victim] = true;
            }
        }
    }

    /** The operator replaces or frees the disk: the member restarts on it. */
    private void repair(int i) {
        c.crash(i, true);
        c.repairDisk(i);
        diskBad[i] = false;
        fenced[i] = true; // it starts repairing; seen healthy only once caught up
        c.restart(i);
    }

    /** Before the final healing: every bad disk is repaired and every stopped member restarted. */
    void repairAll() {
        for (int i = 0; i < c.size(); i++) {
            if (diskBad[i] || (c.isUp(i) && c.node(i).status().role() == Role.ERROR)) {
                repair(i);
            }
        }
    }
}

package io.wheelraft.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * How many groups of one process may campaign at once. When a process dies holding thousands of
 * leaderships, every group it led loses its leader at the same moment; if each follower
 * campaigned as soon as its own timer said so, the survivors would run thousands of pre-vote and
 * vote rounds together, answer each other after the rounds' deadlines, retry, and none would win
 * (measured: no group of 3,501 led again within 30 s at 10,000 groups per process). With a bound,
 * the groups fail over in waves that each finish: a group that may not start its round now waits
 * in line and starts when a slot frees, oldest first. Waiting is always safe (it only delays an
 * election); the bound never applies to a leadership transfer or to a fresh group's first
 * campaign.
 *
 * <p>A slot is held from the start of a round until the group's campaign is over (it leads, follows
 * a leader, or the round ended); between a lost round and its retry it goes back, so the retry
 * waits its turn behind the groups that have not had one. A holder that never gives its slot
 * back (a node that stopped mid-round) loses it {@code holdLimitMs} after taking it, the next
 * time anyone asks. The same one object serves every group of the process, from their Raft
 * lanes; it has no clock and no thread: the callers pass their time, and a granted waiter is
 * told through the callback it left, outside the lock.
 */
public final class CampaignSlots {

    private static final CampaignSlots UNLIMITED = new CampaignSlots(Integer.MAX_VALUE, Long.MAX_VALUE);

    private final int limit;
    private final long holdLimitMs;
    /** Holders in the order they took their slot, with when. */
    private final Map<Object, Long> holders = new LinkedHashMap<>();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private final Set<Object> waiting = new HashSet<>();
    private long granted;
    private long queued;
    private int peakInUse;
    /** The latest time a caller passed: when a slot handed on by {@link #release} counts as taken. */
    private long latestMs = Long.MIN_VALUE;

    private record Waiter(Object holder, Runnable onGranted) {
    }

    /**
     * @param limit       groups that may campaign at once
     * @param holdLimitMs a slot not given back within this long after it was taken is taken back
     */
    public CampaignSlots(int limit, long holdLimitMs) {
        if (limit < 1) {
            throw new IllegalArgumentException("at least one group must be able to campaign, limit was " + limit);
        }
        if (holdLimitMs < 1) {
            throw new IllegalArgumentException("holdLimitMs must be positive, was " + holdLimitMs);
        }
        this.limit = limit;
        this.holdLimitMs = holdLimitMs;
    }

    /** No bound: every group campaigns when its own timers say (a process hosting one group, tests). */
    public static CampaignSlots unlimited() {
        return UNLIMITED;
    }

    public boolean bounded() {
        return limit != Integer.MAX_VALUE;
    }

    public int limit() {
        return limit;
    }

    /**
     * Takes a slot for {@code holder} if one is free and nobody waits for one (a waiter goes
     * first); true also when it holds one already.
     */
    public boolean tryTake(Object holder, long nowMs) {
        if (!bounded()) {
            return true;
        }
        List<Runnable> grants;
        boolean took;
        synchronized (this) {
            grants = expire(nowMs);
            took = holders.containsKey(holder);
            if (!took && holders.size() < limit && waiters.isEmpty()) {
                holders.put(holder, latestMs);
                granted++;
                peakInUse = Math.max(peakInUse, holders.size());
                took = true;
            }
        }
        grants.forEach(Runnable::run);
        return took;
    }

    /**
     * Puts {@code holder} in line for a slot: {@code onGranted} runs once one is its (at once,
     * on this thread, if one is free and nobody is ahead). A holder already in line or holding a
     * slot is left as it is.
     */
    public void awaitSlot(Object holder, long nowMs, Runnable onGranted) {
        Objects.requireNonNull(onGranted, "onGranted");
        if (!bounded()) {
            onGranted.run();
            return;
        }
        List<Runnable> grants;
        synchronized (this) {
            grants = expire(nowMs);
            if (!holders.containsKey(holder) && waiting.add(holder)) {
                waiters.addLast(new Waiter(holder, onGranted));
                queued++;
                grants.addAll(grantFree());
            }
        }
        grants.forEach(Runnable::run);
    }

    /** {@code holder}'s campaign is over: its slot goes to the first in line. Nothing if it holds none. */
    public void release(Object holder) {
        if (!bounded()) {
            return;
        }
        List<Runnable> grants;
        synchronized (this) {
            if (holders.remove(holder) == null) {
                return;
            }
            grants = grantFree();
        }
        grants.forEach(Runnable::run);
    }

    /** {@code holder} stopped: it gives back its slot and leaves the line. */
    public void forget(Object holder) {
        if (!bounded()) {
            return;
        }
        synchronized (this) {
            if (waiting.remove(holder)) {
                waiters.removeIf(w -> w.holder == holder);
            }
        }
        release(holder);
    }

    public synchronized int inUse() {
        return holders.size();
    }

    public synchronized int inLine() {
        return waiters.size();
    }

    /** Slots handed out so far, directly or to a waiter. */
    public synchronized long granted() {
        return granted;
    }

    /** The most slots held at once so far. */
    public synchronized int peakInUse() {
        return peakInUse;
    }

    /** Times a group had to wait in line. */
    public synchronized long queued() {
        return queued;
    }

    /** Takes back slots held too long; hands what is free to the line. Under the lock. */
    private List<Runnable> expire(long nowMs) {
        latestMs = Math.max(latestMs, nowMs);
        boolean freed = false;
        Iterator<Map.Entry<Object, Long>> it = holders.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Object, Long> e = it.next();
            if (nowMs - e.getValue() < holdLimitMs) {
                break; // in the order taken: the rest are younger
            }
            it.remove();
            freed = true;
        }
        return freed ? grantFree() : new ArrayList<>();
    }

    /** Under the lock: the free slots go to the first in line; returns their callbacks, to run outside it. */
    private List<Runnable> grantFree() {
        List<Runnable> grants = new ArrayList<>();
        while (holders.size() < limit && !waiters.isEmpty()) {
            Waiter w = waiters.pollFirst();
            waiting.remove(w.holder);
            holders.put(w.holder, latestMs);
            granted++;
            peakInUse = Math.max(peakInUse, holders.size());
            grants.add(w.onGranted);
        }
        return grants;
    }
}

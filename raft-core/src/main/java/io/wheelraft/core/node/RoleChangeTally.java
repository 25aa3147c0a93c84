package io.wheelraft.core.node;

import io.wheelraft.core.Role;
import io.wheelraft.core.logging.RateLimitedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the starts and the follower, candidate and leader changes of the nodes that do not log
 * each one ({@link io.wheelraft.core.NodeOptions#logRoleChanges()} false), and writes one INFO line
 * for the whole process at most every 10 s with the counts since the previous line. A process
 * hosting 100,000 groups wrote about five lines per group at a start (one when it started, one or
 * two per election it saw, two more per group it came to lead): hundreds of thousands of lines, each
 * written under the appender's lock by one of the Raft threads. Those nodes' lines go to DEBUG.
 * Errors, repairs and shutdowns are rare and always logged one by one. Thread-safe.
 */
final class RoleChangeTally {

    private static final Logger LOG = LoggerFactory.getLogger(NodeImpl.class);
    /** The one tally of the process (a logger is process-wide too). */
    static final RoleChangeTally PROCESS = new RoleChangeTally((warn, format, args) -> LOG.info(format, args), RateLimitedLog.DEFAULT_INTERVAL_MS);

    private final RateLimitedLog.Sink sink;
    private final long intervalMs;
    private final LongAdder started = new LongAdder();
    private final Map<Role, LongAdder> became = new EnumMap<>(Role.class);
    /** When the last line was written (the start of the counts it now holds); MIN_VALUE: none yet. */
    private volatile long lastLineMs = Long.MIN_VALUE;

    RoleChangeTally(RateLimitedLog.Sink sink, long intervalMs) {
        this.sink = sink;
        this.intervalMs = intervalMs;
        for (Role r : new Role[] {Role.FOLLOWER, Role.CANDIDATE, Role.LEADER}) {
            became.put(r, new LongAdder());
        }
    }

    /** Whether a change to {@code role} is tallied rather than logged on its own. */
    static boolean tallied(Role role) {
        return role == Role.FOLLOWER || role == Role.CANDIDATE || role == Role.LEADER;
    }

    /** A node started. */
    void started(long nowMs) {
        started.increment();
        maybeWrite(nowMs);
    }

    /** A node became {@code role} (one of the {@link #tallied} roles). */
    void became(Role role, long nowMs) {
        became.get(role).increment();
        maybeWrite(nowMs);
    }

    private void maybeWrite(long nowMs) {
        long last = lastLineMs;
        if (last != Long.MIN_VALUE && nowMs - last < intervalMs) {
            return;
        }
        synchronized (this) {
            if (lastLineMs != Long.MIN_VALUE && nowMs - lastLineMs < intervalMs) {
                return;
            }
            long since = lastLineMs == Long.MIN_VALUE ? nowMs : lastLineMs;
            lastLineMs = nowMs;
            sink.write(false, "nodes that log no line of their own: {} started, {} became leader, {} follower, {} candidate in the last {} s",
                    new Object[] {started.sumThenReset(), became.get(Role.LEADER).sumThenReset(), became.get(Role.FOLLOWER).sumThenReset(),
                            became.get(Role.CANDIDATE).sumThenReset(), (nowMs - since + 999) / 1000});
        }
    }
}

package io.wheelraft.client;

import com.google.protobuf.ByteString;
import io.wheelraft.client.proto.RetryTableSnapshot;
import io.wheelraft.client.proto.SessionCommand;
import io.wheelraft.client.proto.SessionRecord;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The server side of exactly-once commands for one group: per client id, the answers of the
 * commands applied and not yet acknowledged by the client, so that a retried command is answered
 * from here instead of being applied again.
 *
 * <p>Every decision is a function of the log alone, so all members keep identical tables: time is
 * the largest leader timestamp seen in applied commands (not the local clock), a session idle
 * longer than {@code sessionExpiryMs} of that time is dropped, and when more than
 * {@code maxSessions} clients are active the one idle longest is evicted. A client acknowledges
 * answers by sending its lowest unanswered sequence ({@code first_unacked}) with each command;
 * answers below it are forgotten. A command below that floor is a retry of something already
 * answered: it is never applied again and is reported {@link Kind#STALE}.
 *
 * <p>Safety caveat (documented for users): a session that expired or was evicted forgets its
 * answers, so a retry arriving after that would be applied again. The client gives up a command
 * at its deadline, so keep {@code sessionExpiryMs} far above the longest client deadline and
 * {@code maxSessions} above the number of live clients; {@link #evicted()} counts evictions.
 *
 * <p>Not thread-safe: used on the apply thread (and from snapshot save/load, also on it).
 */
final class RetryTable {

    static final int FORMAT_VERSION = 1;

    /** What to do with a command. */
    enum Kind { NEW, DUPLICATE, STALE }

    /** The verdict on one command: for a duplicate, the first answer. */
    record Verdict(Kind kind, byte[] result, long index) {
        static final Verdict NEW = new Verdict(Kind.NEW, null, 0);
        static final Verdict STALE = new Verdict(Kind.STALE, null, 0);
    }

    private record Answer(byte[] result, long index) {
    }

    private static final class Session {
        long lastActiveMs;
        long firstUnacked;
        final TreeMap<Long, Answer> answers = new TreeMap<>();
    }

    private final long sessionExpiryMs;
    private final int maxSessions;
    private final int maxAnswersPerSession;
    /** In order of last activity, oldest first (access order), so expiry and eviction look only at the head. */
    private final LinkedHashMap<String, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);
    private long clockMs;
    private long expired;
    private long evicted;

    RetryTable(long sessionExpiryMs, int maxSessions, int maxAnswersPerSession) {
        if (sessionExpiryMs <= 0 || maxSessions <= 0 || maxAnswersPerSession <= 0) {
            throw new IllegalArgumentException("retry table limits must be positive, were expiry " + sessionExpiryMs
                    + " ms, " + maxSessions + " sessions, " + maxAnswersPerSession + " answers per session");
        }
        this.sessionExpiryMs = sessionExpiryMs;
        this.maxSessions = maxSessions;
        this.maxAnswersPerSession = maxAnswersPerSession;
    }

    /** Decides about {@code command} (and advances the table's clock, expiring idle sessions). */
    Verdict check(SessionCommand command) {
        advanceClock(command.getLeaderTimeMs());
        Session s = sessions.get(command.getClientId());
        if (s == null) {
            if (sessions.size() >= maxSessions) {
                Iterator<Map.Entry<String, Session>> oldest = sessions.entrySet().iterator();
                oldest.next();
                oldest.remove();
                evicted++;
            }
            s = new Session();
            sessions.put(command.getClientId(), s);
        }
        s.lastActiveMs = clockMs;
        acknowledge(s, command.getFirstUnacked());
        long seq = command.getSequence();
        if (seq < s.firstUnacked) {
            return Verdict.STALE;
        }
        Answer a = s.answers.get(seq);
        return a == null ? Verdict.NEW : new Verdict(Kind.DUPLICATE, a.result(), a.index());
    }

    /** Remembers the answer of a command {@link #check} found NEW and the state machine applied. */
    void record(String clientId, long sequence, byte[] result, long index) {
        Session s = sessions.get(clientId);
        if (s == null) {
            return; // cannot happen: check() created it in the same apply step
        }
        s.answers.put(sequence, new Answer(result, index));
        if (s.answers.size() > maxAnswersPerSession) {
            // Forget the oldest answer and raise the floor past it, so its retry is STALE, never re-applied.
            long oldest = s.answers.pollFirstEntry().getKey();
            s.firstUnacked = Math.max(s.firstUnacked, oldest + 1);
        }
    }

    private static void acknowledge(Session s, long firstUnacked) {
        if (firstUnacked > s.firstUnacked) {
            s.firstUnacked = firstUnacked;
            s.answers.headMap(firstUnacked).clear();
        }
    }

    private void advanceClock(long leaderTimeMs) {
        if (leaderTimeMs > clockMs) {
            clockMs = leaderTimeMs;
        }
        Iterator<Map.Entry<String, Session>> it = sessions.entrySet().iterator();
        while (it.hasNext()) {
            Session oldest = it.next().getValue();
            if (clockMs - oldest.lastActiveMs <= sessionExpiryMs) {
                break;
            }
            it.remove();
            expired++;
        }
    }

    int size() {
        return sessions.size();
    }

    long expired() {
        return expired;
    }

    long evicted() {
        return evicted;
    }

    boolean knows(String clientId) {
        return sessions.containsKey(clientId);
    }

    RetryTableSnapshot toSnapshot() {
        RetryTableSnapshot.Builder b = RetryTableSnapshot.newBuilder().setFormatVersion(FORMAT_VERSION).setClockMs(clockMs)
                .setExpired(expired).setEvicted(evicted);
        // Oldest first, so a loaded table keeps the same expiry and eviction order.
        sessions.forEach((id, s) -> {
            SessionRecord.Builder r = SessionRecord.newBuilder().setClientId(id).setLastActiveMs(s.lastActiveMs)
                    .setFirstUnacked(s.firstUnacked);
            s.answers.forEach((seq, a) -> r.addSequences(seq).addResults(ByteString.copyFrom(a.result())).addIndexes(a.index()));
            b.addSessions(r);
        });
        return b.build();
    }

    /**
     * Replaces the table with a snapshot's.
     *
     * @throws IllegalArgumentException if the snapshot was written by another format or is inconsistent
     */
    void load(RetryTableSnapshot snapshot) {
        if (snapshot.getFormatVersion() != FORMAT_VERSION) {
            throw new IllegalArgumentException("retry table format " + snapshot.getFormatVersion() + "; this build reads only " + FORMAT_VERSION);
        }
        sessions.clear();
        for (SessionRecord r : snapshot.getSessionsList()) {
            if (r.getSequencesCount() != r.getResultsCount() || r.getSequencesCount() != r.getIndexesCount()) {
                throw new IllegalArgumentException("retry table session " + r.getClientId() + " has " + r.getSequencesCount()
                        + " sequences but " + r.getResultsCount() + " results and " + r.getIndexesCount() + " indexes");
            }
            Session s = new Session();
            s.lastActiveMs = r.getLastActiveMs();
            s.firstUnacked = r.getFirstUnacked();
            for (int i = 0; i < r.getSequencesCount(); i++) {
                s.answers.put(r.getSequences(i), new Answer(r.getResults(i).toByteArray(), r.getIndexes(i)));
            }
            sessions.put(r.getClientId(), s);
        }
        clockMs = snapshot.getClockMs();
        expired = snapshot.getExpired();
        evicted = snapshot.getEvicted();
    }
}

package io.wheelraft.core;

import java.util.Objects;

/** The outcome of an operation: OK, or an error code with a message that explains it. Immutable. */
public final class Status {

    private static final Status OK = new Status(RaftError.SUCCESS, "");

    private final RaftError code;
    private final String message;
    private final PeerId leaderHint;

    private Status(RaftError code, String message) {
        this(code, message, null);
    }

    private Status(RaftError code, String message, PeerId leaderHint) {
        this.code = Objects.requireNonNull(code, "code");
        this.message = message == null ? "" : message;
        this.leaderHint = leaderHint;
    }

    public static Status ok() {
        return OK;
    }

    public static Status error(RaftError code, String message) {
        if (code == RaftError.SUCCESS) {
            throw new IllegalArgumentException("an error status needs an error code, not SUCCESS");
        }
        return new Status(code, message);
    }

    public static Status error(RaftError code, String format, Object... args) {
        return error(code, String.format(format, args));
    }

    /** A not-leader error that tells the caller where the leader is (null if unknown). */
    public static Status notLeader(PeerId leader) {
        return new Status(RaftError.NOT_LEADER, leader == null ? "not the leader; leader unknown" : "not the leader; leader is " + leader, leader);
    }

    public boolean isOk() {
        return code == RaftError.SUCCESS;
    }

    public RaftError code() {
        return code;
    }

    public String message() {
        return message;
    }

    /** The leader, when the error is {@link RaftError#NOT_LEADER} and the leader is known; else null. */
    public PeerId leaderHint() {
        return leaderHint;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Status s && code == s.code && message.equals(s.message) && Objects.equals(leaderHint, s.leaderHint);
    }

    @Override
    public int hashCode() {
        return Objects.hash(code, message, leaderHint);
    }

    @Override
    public String toString() {
        return isOk() ? "OK" : code + ": " + message;
    }
}

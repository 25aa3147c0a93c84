package io.wheelraft.core;

/** Why an operation failed. Every {@link Status} that is not OK carries one. */
public enum RaftError {
    /** Not an error. */
    SUCCESS,
    /** This node is not the leader; the status message names the leader if known. */
    NOT_LEADER,
    /** The request carried a term older than this node's. */
    STALE_TERM,
    /** A queue is full; retry later. Nothing was applied. */
    BUSY,
    /** The node is shutting down or has shut down. */
    SHUTTING_DOWN,
    /** The operation did not finish in time; it may or may not take effect. */
    TIMEOUT,
    /** The caller passed something malformed; the message says what. */
    INVALID_ARGUMENT,
    /** The leader lost leadership before the entry committed; it may still commit later. */
    LEADERSHIP_LOST,
    /** A leader transfer is in progress; new tasks are refused until it ends. */
    LEADER_TRANSFERRING,
    /** A membership change is already in progress. */
    CONFIGURATION_CHANGING,
    /** The state machine reported an error; the node stopped applying. */
    STATE_MACHINE_ERROR,
    /** Storage failed (I/O error or detected corruption). */
    STORAGE_ERROR,
    /** A peer could not be reached. */
    UNREACHABLE,
    /** The node does not know this group or peer. */
    NOT_FOUND,
    /** The task's expected term did not match the leader's term. */
    TERM_MISMATCH,
    /** Anything else; the message says what. */
    INTERNAL
}

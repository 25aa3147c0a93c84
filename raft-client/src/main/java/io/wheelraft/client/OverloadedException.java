package io.wheelraft.client;

/**
 * The servers refused the call as too busy (BUSY) until its deadline, or the client had too many
 * calls outstanding; nothing was applied. Slow down, then retry.
 */
public final class OverloadedException extends NotAppliedException {

    private static final long serialVersionUID = 1L;

    public OverloadedException(String message) {
        super(message);
    }
}

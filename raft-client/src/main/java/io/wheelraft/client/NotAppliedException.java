package io.wheelraft.client;

/**
 * The call certainly had no effect: no attempt of it was applied (every attempt was refused before
 * being appended, never reached a server, or was a read). Safe to retry, or to report as failed.
 */
public class NotAppliedException extends RaftClientException {

    private static final long serialVersionUID = 1L;

    public NotAppliedException(String message) {
        super(message);
    }
}

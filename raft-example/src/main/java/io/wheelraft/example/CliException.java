package io.wheelraft.example;

/**
 * A failure the command line reports as one line on standard error with a chosen exit code,
 * never as a stack trace: bad input (exit 2), a port in use, an unwritable data directory or an
 * unreachable cluster (exit 1). Immutable.
 */
public final class CliException extends RuntimeException {

    /** Bad usage: malformed arguments. */
    public static final int USAGE = 2;
    /** The command could not do its job. */
    public static final int FAILED = 1;

    private final int exitCode;

    public CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    public CliException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public static CliException usage(String message) {
        return new CliException(USAGE, message);
    }

    public static CliException failed(String message) {
        return new CliException(FAILED, message);
    }

    public int exitCode() {
        return exitCode;
    }
}

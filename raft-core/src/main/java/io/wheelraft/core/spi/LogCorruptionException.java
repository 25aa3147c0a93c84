package io.wheelraft.core.spi;

/**
 * Stored data failed verification (checksum mismatch, gap, truncated value, unknown format).
 * The message names the index or file and the data directory. A node never skips corruption:
 * it refuses to start, or stops, instead of serving wrong data.
 */
public class LogCorruptionException extends StorageException {

    public LogCorruptionException(String message) {
        super(message);
    }

    public LogCorruptionException(String message, Throwable cause) {
        super(message, cause);
    }
}

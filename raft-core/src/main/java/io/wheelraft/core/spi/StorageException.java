package io.wheelraft.core.spi;

/** A storage operation failed (I/O error, closed store). The message says what and where. */
public class StorageException extends RuntimeException {

    public StorageException(String message) {
        super(message);
    }

    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }
}

package io.wheelraft.core.storage.memory;

/**
 * Checks that a snapshot file name is a plain relative path, so that a storage which maps names
 * to files on disk can never be led outside its snapshot directory, and so that the in-memory and
 * on-disk storages accept the same names. Stateless.
 */
final class SnapshotFileNames {

    private SnapshotFileNames() {
    }

    /**
     * @throws IllegalArgumentException naming the name and what is wrong with it
     */
    static String validate(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("snapshot file name must not be empty");
        }
        if (name.startsWith("/")) {
            throw new IllegalArgumentException("snapshot file name '" + name + "' must be relative (it starts with '/')");
        }
        if (name.indexOf('\\') >= 0 || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("snapshot file name '" + name + "' must not contain '\\' or NUL");
        }
        for (String segment : name.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                throw new IllegalArgumentException("snapshot file name '" + name
                        + "' must not have empty, '.' or '..' path segments");
            }
        }
        return name;
    }
}

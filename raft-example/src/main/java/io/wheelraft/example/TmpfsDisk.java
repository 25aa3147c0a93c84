package io.wheelraft.example;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A small disk for one node: a tmpfs mounted on a directory (Linux, root), that can be filled to
 * the last byte with a filler file and freed again. Every mount is undone by {@link #close()} and,
 * should the JVM exit first (Ctrl-C), by a shutdown hook (a lazy unmount, since a killed server
 * may still hold files open for a moment). Not thread-safe: one controller drives it.
 */
final class TmpfsDisk implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TmpfsDisk.class);
    private static final Set<Path> MOUNTED = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> MOUNTED.forEach(TmpfsDisk::unmountQuietly), "unmount-tmpfs"));
    }

    private final Path dir;
    private final Path filler;

    private TmpfsDisk(Path dir) {
        this.dir = dir;
        this.filler = dir.resolve("disk-full-filler");
    }

    /** Null when this machine can mount a tmpfs (Linux, root); otherwise why not, in one line. */
    static String unsupportedReason() {
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            return "it needs Linux (it mounts a tmpfs for one node's data), this is " + System.getProperty("os.name");
        }
        if (!"root".equals(System.getProperty("user.name")) && !uidIsZero()) {
            return "it needs root (it mounts a tmpfs for one node's data); run it as root, e.g. with sudo";
        }
        return null;
    }

    private static boolean uidIsZero() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    return line.split("\\s+")[1].equals("0");
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /** Mounts a tmpfs of {@code bytes} on {@code dir} (created if missing). */
    static TmpfsDisk mount(Path dir, long bytes) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        run("mount", "-t", "tmpfs", "-o", "size=" + bytes, "tmpfs", dir.toString());
        MOUNTED.add(dir);
        return new TmpfsDisk(dir);
    }

    Path dir() {
        return dir;
    }

    /** Bytes still free for files (what statfs reports to an unprivileged writer). */
    long freeBytes() throws IOException {
        FileStore store = Files.getFileStore(dir);
        return store.getUsableSpace();
    }

    /**
     * Fills the disk to the last byte: writes the filler in 1 MiB pieces until the disk refuses,
     * then in ever smaller pieces down to single bytes, so not even one more byte fits. Returns the
     * filler's size.
     */
    long fill() throws IOException {
        byte[] chunk = new byte[1 << 20];
        for (int size = chunk.length; size >= 1; size /= 2) {
            boolean room = true;
            while (room) {
                try (OutputStream out = Files.newOutputStream(filler, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
                    out.write(chunk, 0, size);
                } catch (IOException full) {
                    room = false; // ENOSPC: go on with smaller pieces
                }
            }
        }
        return Files.size(filler);
    }

    /** Removes the filler: the node has room again. */
    void free() throws IOException {
        Files.deleteIfExists(filler);
    }

    @Override
    public void close() {
        unmountQuietly(dir);
        MOUNTED.remove(dir);
    }

    private static void unmountQuietly(Path dir) {
        try {
            run("umount", dir.toString());
        } catch (IOException | InterruptedException busy) {
            try {
                // A server killed a moment ago may still hold files open: detach now, freed when closed.
                run("umount", "-l", dir.toString());
            } catch (IOException | InterruptedException e) {
                LOG.warn("could not unmount the tmpfs on {}: {}; unmount it by hand: umount -l {}", dir, e.getMessage(), dir);
            }
        }
    }

    private static void run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + " did not finish within 30 s");
        }
        String out = new String(p.getInputStream().readAllBytes()).trim();
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (exit " + p.exitValue() + "): " + out);
        }
    }
}

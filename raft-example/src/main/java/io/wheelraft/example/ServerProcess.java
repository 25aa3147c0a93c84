package io.wheelraft.example;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One counter server running as a child JVM (the same java binary and class path as this
 * process, so it works from the fat jar and from a test class path), with its own data
 * directory and log file. Faults: {@link #kill()} (SIGKILL), {@link #pause()} / {@link #resume()}
 * (SIGSTOP / SIGCONT). Every process is tracked by {@link ChildProcesses}, so none outlives us.
 *
 * <p>Not thread-safe: one controller drives it.
 */
final class ServerProcess {

    private final String endpoint;
    private final Path dataDir;
    private final Path logFile;
    private final List<String> serverArgs;
    private final Path classArchive;
    private final List<String> launcher;
    private Process process;
    private long startedNanos;

    /**
     * @param serverArgs the {@code server} options besides {@code --data} and {@code --self}
     */
    ServerProcess(String endpoint, Path dataDir, Path logFile, List<String> serverArgs, Path classArchive) {
        this(endpoint, dataDir, logFile, serverArgs, classArchive, List.of());
    }

    /**
     * @param launcher what the java command is run under, e.g. {@code ip netns exec NS}; it must
     *                 exec the java command (keep its pid), so that {@link #kill()} and
     *                 {@link #pause()} reach the server itself. Empty: java is spawned directly.
     */
    ServerProcess(String endpoint, Path dataDir, Path logFile, List<String> serverArgs, Path classArchive, List<String> launcher) {
        this.launcher = List.copyOf(launcher);
        this.classArchive = classArchive;
        this.endpoint = endpoint;
        this.dataDir = dataDir;
        this.logFile = logFile;
        this.serverArgs = List.copyOf(serverArgs);
    }

    String endpoint() {
        return endpoint;
    }

    /** When the current process was spawned (System.nanoTime). */
    long startedNanos() {
        return startedNanos;
    }

    /** Spawns the server; its standard output and error are appended to the log file. */
    void start() throws IOException {
        if (alive()) {
            throw new IllegalStateException(endpoint + " is already running");
        }
        Files.createDirectories(logFile.getParent());
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(javaCommand(classArchive != null && Files.isRegularFile(classArchive) ? "-XX:SharedArchiveFile=" + classArchive : null));
        cmd.add("server");
        cmd.add("--data");
        cmd.add(dataDir.toString());
        cmd.add("--self");
        cmd.add(endpoint);
        cmd.addAll(serverArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        startedNanos = System.nanoTime();
        process = pb.start();
        ChildProcesses.track(process);
    }

    /** The kernel offers transparent huge pages to a process that asks (madvise or always): Linux only. */
    static final boolean TRANSPARENT_HUGE_PAGES = hugePagesOffered();

    private static boolean hugePagesOffered() {
        try {
            String mode = Files.readString(Path.of("/sys/kernel/mm/transparent_hugepage/enabled"));
            return mode.contains("[always]") || mode.contains("[madvise]");
        } catch (IOException | RuntimeException e) {
            return false; // not Linux, or not readable: run without
        }
    }

    /** {@code java [options] -cp CLASSPATH io.wheelraft.example.Main}, plus {@code cdsOption} if not null. */
    private static List<String> javaCommand(String cdsOption) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        // Small heaps, the serial collector and C1 only: three servers and the load share two cores,
        // and a restarted server should reach full speed quickly.
        cmd.add("-Xms64m");
        cmd.add("-Xmx256m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        if (TRANSPARENT_HUGE_PAGES) {
            // A killed process's connections close only after the kernel has freed its memory (the
            // last thread unmaps it, then closes its files), so that freeing is the first part of
            // every failover after a kill: 17-51 ms with 4 KiB pages here, 11-23 ms with the heap
            // on huge pages (a tenth of the page tables to tear down).
            cmd.add("-XX:+UseTransparentHugePages");
        }
        if (cdsOption != null) {
            cmd.add(cdsOption);
            cmd.add("-Xlog:cds=off");
            cmd.add("-Xlog:cds+dynamic=off");
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Main.class.getName());
        return cmd;
    }

    /**
     * Records a class-data-sharing archive of the classes a server loads (one server started and
     * stopped at once), so later servers start in about half a second instead of well over one:
     * that is most of a restarted node's catch-up time. Returns the archive, or null if the JVM
     * could not make one (servers then start without it).
     */
    static Path recordClassArchive(Path dir) {
        Path archive = dir.resolve("server-classes.jsa");
        try {
            Files.createDirectories(dir);
            int port = LocalCluster.freePorts(1).get(0);
            String self = "127.0.0.1:" + port;
            List<String> cmd = javaCommand("-XX:ArchiveClassesAtExit=" + archive);
            cmd.addAll(List.of("server", "--data", dir.resolve("class-archive-probe").toString(), "--self", self, "--peers", self,
                    "--exit-when-started"));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("class-archive.log").toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            ChildProcesses.track(p);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return null;
            }
            ChaosRunner.deleteRecursively(dir.resolve("class-archive-probe"));
            return Files.isRegularFile(archive) ? archive : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL, then waits until the process is gone (its sockets are closed by the kernel). */
    void kill() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** SIGTERM (a clean shutdown: the node closes its storage), then waits until the process is gone. */
    void stop() throws InterruptedException {
        if (process != null) {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** Exit code of the last process, or null while it runs (or if it never started). */
    Integer exitCode() {
        return process == null || process.isAlive() ? null : process.exitValue();
    }

    Path dataDir() {
        return dataDir;
    }

    Path logFile() {
        return logFile;
    }

    /** SIGSTOP: the process freezes with its sockets open, like a long GC pause or a hung host. */
    void pause() throws IOException, InterruptedException {
        signal("-STOP");
    }

    /** SIGCONT. */
    void resume() throws IOException, InterruptedException {
        signal("-CONT");
    }

    private void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(process.pid())).redirectErrorStream(true).start();
        if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill " + signal + " " + process.pid() + " failed");
        }
    }
}

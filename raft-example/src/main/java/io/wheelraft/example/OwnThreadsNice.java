package io.wheelraft.example;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Puts this JVM's threads at the nice value the servers' Java threads run at, so that the
 * benchmark's client (its load, its polls of the survivors) gets the share of the cores it would
 * get next to servers at the normal priority. With the servers at nice 10 and the client at 0,
 * the client's threads weigh about ten times as much, and a 10,000-group failover under the
 * writes phase took p99 6.7 and 7.2 s instead of 4.6 s in the same hour. Linux keeps a nice
 * value per thread and a new thread starts with its creator's, so every thread there now is
 * set once ({@code renice}, util-linux) and those started later follow.
 */
final class OwnThreadsNice {

    private OwnThreadsNice() {
    }

    /**
     * Sets every thread of this process to {@code nice} (nothing for 0 or below, or off Linux).
     *
     * @return an empty string, or one line saying why it could not (the run goes on without)
     */
    static String apply(int nice) {
        Path tasks = Path.of("/proc/self/task");
        if (nice <= 0 || !Files.isDirectory(tasks)) {
            return "";
        }
        List<String> command = new ArrayList<>(List.of("renice", "-n", Integer.toString(nice), "-p"));
        try (Stream<Path> ids = Files.list(tasks)) {
            ids.forEach(t -> command.add(t.getFileName().toString()));
        } catch (IOException e) {
            return "cannot list " + tasks + ": " + e.getMessage();
        }
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            int code = p.waitFor();
            return code == 0 ? "" : "renice exited with " + code + " (this JVM's threads keep their priority)";
        } catch (IOException e) {
            return "cannot run renice (" + e.getMessage() + "): this JVM's threads keep their priority";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while setting this JVM's thread priorities";
        }
    }
}

package io.wheelraft.example;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The host's CPU time as {@code /proc/stat} counts it, to tell what share a hypervisor took
 * ("steal") while a point was measured. On a shared virtual machine steal can take most of the
 * cores for minutes, and every system measured then runs slower by far more than they differ:
 * a run's figures are read with it. Used by {@code groups-bench} and raft-bench's runner.
 */
public final class HostCpu {

    /** Cumulative jiffies of all cores: everything, and the part stolen by the hypervisor. */
    public record Snapshot(long total, long steal) {
    }

    private HostCpu() {
    }

    /** Now, or null where {@code /proc/stat} cannot be read (not Linux). */
    public static Snapshot read() {
        try {
            return parse(Files.readAllLines(Path.of("/proc/stat")).get(0));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The aggregate line {@code cpu  user nice system idle iowait irq softirq steal guest guest_nice}:
     * guest time is already counted in user, so the total is the first eight fields.
     */
    public static Snapshot parse(String cpuLine) {
        String[] f = cpuLine.trim().split("\\s+");
        if (!f[0].equals("cpu") || f.length < 9) {
            throw new IllegalArgumentException("not the aggregate cpu line of /proc/stat: " + cpuLine);
        }
        long total = 0;
        for (int i = 1; i <= 8; i++) {
            total += Long.parseLong(f[i]);
        }
        return new Snapshot(total, Long.parseLong(f[8]));
    }

    /** Percent of all the host's CPU time between the two that was stolen; NaN if either is missing. */
    public static double stealPercent(Snapshot before, Snapshot after) {
        if (before == null || after == null || after.total() <= before.total()) {
            return Double.NaN;
        }
        return 100.0 * (after.steal() - before.steal()) / (after.total() - before.total());
    }
}

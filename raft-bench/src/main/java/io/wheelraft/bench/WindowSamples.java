package io.wheelraft.bench;

import io.wheelraft.example.HostCpu;

/**
 * The servers' process CPU and the host's steal, sampled as a point's measured window opens and
 * closes: a figure per operation then covers the window alone, not the settling before it (where
 * a system may still be compiling the path the new in-flight count takes). Used by one run on one
 * thread.
 */
final class WindowSamples implements ClosedLoopLoad.WindowEdges {

    private final ServerCluster cluster;
    private long cpuAtOpen = -1;
    private long cpuAtClose = -1;
    private HostCpu.Snapshot hostAtOpen;
    private HostCpu.Snapshot hostAtClose;

    WindowSamples(ServerCluster cluster) {
        this.cluster = cluster;
    }

    @Override
    public void opened() {
        cpuAtOpen = cluster.serverCpuNanos();
        hostAtOpen = HostCpu.read();
    }

    @Override
    public void closed() {
        cpuAtClose = cluster.serverCpuNanos();
        hostAtClose = HostCpu.read();
    }

    /** The three servers' CPU time over the window, or -1 if the window did not run to its end. */
    long serverCpuNanos() {
        return cpuAtOpen < 0 || cpuAtClose < 0 ? -1 : cpuAtClose - cpuAtOpen;
    }

    /** The host's steal over the window, in percent; NaN when unknown. */
    double stealPercent() {
        return hostAtOpen == null || hostAtClose == null ? Double.NaN : HostCpu.stealPercent(hostAtOpen, hostAtClose);
    }
}

package io.wheelraft.bench;

/**
 * One measured point: a system at one in-flight count.
 *
 * @param loadBefore   the machine's 1-minute load average when the point started (other work shares the cores)
 * @param stealPercent the share of the host's CPU time a hypervisor took over settling and window ({@link HostCpu}); NaN if unknown
 */
record BenchResult(String system, int inFlight, double opsPerSecond, double p50Ms, double p99Ms, double p999Ms,
                   long acknowledged, long failed, double loadBefore, double stealPercent) {
}

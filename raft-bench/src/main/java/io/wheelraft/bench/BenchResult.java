package io.wheelraft.bench;

/**
 * One measured point: a system at one in-flight count.
 *
 * @param loadBefore   the machine's 1-minute load average when the point started (other work shares the cores)
 * @param stealPercent the share of the host's CPU time a hypervisor took over the window ({@link HostCpu}); NaN if unknown
 * @param serverCpuMicrosPerOp the three servers' process CPU over the window divided by the increments acknowledged in
 *                     it, in microseconds; NaN if unknown (tables written before the column existed)
 */
record BenchResult(String system, int inFlight, double opsPerSecond, double p50Ms, double p99Ms, double p999Ms,
                   long acknowledged, long failed, double loadBefore, double stealPercent, double serverCpuMicrosPerOp) {
}

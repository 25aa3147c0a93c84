package io.wheelraft.bench;

/**
 * One measured point: a system at one in-flight count.
 *
 * @param loadBefore the machine's 1-minute load average when the point started (other work shares the cores)
 */
record BenchResult(String system, int inFlight, double opsPerSecond, double p50Ms, double p99Ms, double p999Ms,
                   long acknowledged, long failed, double loadBefore) {
}

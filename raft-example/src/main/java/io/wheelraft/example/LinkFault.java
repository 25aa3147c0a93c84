package io.wheelraft.example;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A fault on every link between the chaos run's servers, for the whole run: a share of the packets
 * each server sends to another one dropped ({@code --link-loss}), and each chunk of bytes between
 * two servers held for {@code delay ± jitter} ms ({@code --link-delay}, {@code --link-jitter}).
 * Clients and the runner reach the servers on clean links. Immutable.
 *
 * @param lossPercent percent of the packets a server sends to another server that are dropped, 0-99
 * @param delayMs     the mean delay added to each chunk between two servers, ms
 * @param jitterMs    the delay is drawn uniformly from {@code [delayMs - jitterMs, delayMs + jitterMs]}
 */
record LinkFault(int lossPercent, int delayMs, int jitterMs) {

    static final LinkFault NONE = new LinkFault(0, 0, 0);
    /** Longer delays would only measure TCP's and gRPC's timeouts. */
    static final int MAX_DELAY_MS = 10_000;

    /** True when some fault is asked for: the servers must then run in their own network namespaces. */
    boolean any() {
        return lossPercent != 0 || delayMs != 0 || jitterMs != 0;
    }

    boolean delays() {
        return delayMs != 0 || jitterMs != 0;
    }

    /** Why these values cannot run, in one line naming the option, or null when they can. */
    String invalidReason() {
        if (lossPercent < 0 || lossPercent > 99) {
            return "--link-loss must be 0 to 99 percent, was " + lossPercent + (lossPercent == 100 ? " (to drop every packet use --mode isolate-leader)" : "");
        }
        if (delayMs < 0 || delayMs > MAX_DELAY_MS) {
            return "--link-delay must be 0 to " + MAX_DELAY_MS + " ms, was " + delayMs;
        }
        if (jitterMs < 0 || jitterMs > delayMs) {
            return "--link-jitter must be 0 to --link-delay (" + delayMs + " ms), was " + jitterMs + " (a delay below zero cannot be drawn)";
        }
        return null;
    }

    /** What a reader of the report needs to know, e.g. {@code 5% loss and 20 ± 10 ms delay on every link between servers}. */
    String describe() {
        if (!any()) {
            return "none";
        }
        List<String> parts = new ArrayList<>();
        if (lossPercent != 0) {
            parts.add(lossPercent + "% loss");
        }
        if (delays()) {
            parts.add(jitterMs == 0 ? delayMs + " ms delay" : String.format(Locale.ROOT, "%d ± %d ms delay", delayMs, jitterMs));
        }
        return String.join(" and ", parts) + " on every link between servers";
    }
}

package io.wheelraft.example;

import java.io.PrintStream;

/**
 * A progress bar on standard error: redrawn in place on a terminal, one line per update when
 * standard error is a file or pipe (so logs and CI output stay readable). Not thread-safe.
 */
final class ProgressLine {

    private static final int WIDTH = 30;
    private final PrintStream err;
    private final boolean terminal;
    private final boolean enabled;
    private int lastLength;

    ProgressLine(PrintStream err, boolean enabled) {
        this.err = err;
        this.terminal = System.console() != null;
        this.enabled = enabled;
    }

    void update(int done, int total, String detail) {
        if (!enabled) {
            return;
        }
        int filled = total == 0 ? WIDTH : (int) ((long) WIDTH * done / total);
        String bar = "[" + "#".repeat(filled) + "-".repeat(WIDTH - filled) + "] " + done + "/" + total + " " + detail;
        if (terminal) {
            err.print("\r" + bar + " ".repeat(Math.max(0, lastLength - bar.length())));
            lastLength = bar.length();
        } else {
            err.println(bar);
        }
        err.flush();
    }

    void finish() {
        if (enabled && terminal) {
            err.println();
            err.flush();
        }
    }
}

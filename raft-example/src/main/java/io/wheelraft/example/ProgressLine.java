package io.wheelraft.example;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A progress bar with an ETA over a whole run, on standard error. The run is a sequence of steps
 * (start-up, each round, the final checks); each has an estimated length, refined as steps of the
 * same kind finish, and the bar and the ETA come from the steps done plus the time spent in the
 * current one. On a terminal it is redrawn in place once a second; when standard error is a file
 * or pipe it prints one line per step and one every 15 s, so logs and CI output stay readable.
 *
 * <p>Thread-safe: the runner announces steps, a daemon thread redraws.
 */
final class ProgressLine implements AutoCloseable {

    private static final int WIDTH = 30;
    private static final long PIPE_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(15);

    private final PrintStream err;
    private final boolean terminal;
    private final boolean enabled;
    private final long startNanos = System.nanoTime();
    private Thread ticker;
    private int lastLength;
    private long lastPrinted;
    private int steps;
    private int stepsDone;
    private double[] estimates = new double[0];
    private long stepStartNanos = System.nanoTime();
    private String label = "";
    private String detail = "";
    private boolean finished;

    ProgressLine(PrintStream err, boolean enabled) {
        this.err = err;
        this.terminal = System.console() != null;
        this.enabled = enabled;
    }

    /** Plans the run: the estimated seconds of each step, in order. */
    synchronized void plan(double... estimatedSeconds) {
        estimates = estimatedSeconds.clone();
        steps = estimates.length;
        stepsDone = 0;
        stepStartNanos = System.nanoTime();
        if (enabled && ticker == null) {
            ticker = new Thread(this::tick, "chaos-progress");
            ticker.setDaemon(true);
            ticker.start();
        }
    }

    /** The current step is done; {@code next} starts. Steps still ahead of the same kind take the measured length as their estimate. */
    synchronized void next(String nextLabel, String kind) {
        double took = (System.nanoTime() - stepStartNanos) / 1e9;
        if (stepsDone < steps) {
            stepsDone++;
        }
        if (kind != null && took > 0) {
            // Rounds: the next ones will most likely take what this one took.
            for (int i = stepsDone; i < steps - 1; i++) {
                estimates[i] = took;
            }
        }
        stepStartNanos = System.nanoTime();
        label = nextLabel;
        draw(true);
    }

    /** Drops the {@code n} planned steps after the current one (e.g. rounds that will not run). */
    synchronized void skipNext(int n) {
        int drop = Math.max(0, Math.min(n, steps - stepsDone - 1));
        double[] kept = new double[steps - drop];
        System.arraycopy(estimates, 0, kept, 0, stepsDone + 1);
        System.arraycopy(estimates, stepsDone + 1 + drop, kept, stepsDone + 1, steps - stepsDone - 1 - drop);
        estimates = kept;
        steps = kept.length;
    }

    /** Renames the current step without finishing it. */
    synchronized void label(String text) {
        label = text;
        draw(true);
    }

    /** What to show after the bar (e.g. acknowledged writes so far). */
    synchronized void detail(String text) {
        detail = text;
    }

    /** Fraction of the run done, from the steps' estimates (the current step counts at most 95 % of its estimate). */
    synchronized double fraction() {
        double total = 0;
        double done = 0;
        for (int i = 0; i < steps; i++) {
            total += estimates[i];
            if (i < stepsDone) {
                done += estimates[i];
            }
        }
        if (stepsDone < steps) {
            double in = (System.nanoTime() - stepStartNanos) / 1e9;
            done += Math.min(0.95 * estimates[stepsDone], in);
        }
        return total == 0 ? 1 : Math.min(1, done / total);
    }

    /** Seconds left: the rest of the current step's estimate (at least a second) plus the steps after it. */
    synchronized double etaSeconds() {
        if (stepsDone >= steps) {
            return 0;
        }
        double in = (System.nanoTime() - stepStartNanos) / 1e9;
        double left = Math.max(1, estimates[stepsDone] - in);
        for (int i = stepsDone + 1; i < steps; i++) {
            left += estimates[i];
        }
        return left;
    }

    private void tick() {
        while (true) {
            try {
                TimeUnit.SECONDS.sleep(1); // redraw period
            } catch (InterruptedException e) {
                return;
            }
            synchronized (this) {
                if (finished) {
                    return;
                }
                draw(false);
            }
        }
    }

    static String bar(double fraction, long elapsedSecs, double etaSecs, String label, String detail) {
        int filled = (int) Math.round(WIDTH * fraction);
        return String.format(Locale.ROOT, "[%s%s] %3d%% %s elapsed, ETA %s  %s%s", "#".repeat(filled), "-".repeat(WIDTH - filled),
                Math.round(100 * fraction), clock(elapsedSecs), clock(Math.round(etaSecs)), label, detail.isEmpty() ? "" : "; " + detail);
    }

    static String clock(long secs) {
        return secs >= 3600 ? String.format(Locale.ROOT, "%d:%02d:%02d", secs / 3600, secs / 60 % 60, secs % 60)
                : String.format(Locale.ROOT, "%d:%02d", secs / 60, secs % 60);
    }

    private void draw(boolean stepChanged) {
        if (!enabled || finished) {
            return;
        }
        long now = System.nanoTime();
        if (!terminal && !stepChanged && now - lastPrinted < PIPE_PERIOD_NANOS) {
            return;
        }
        lastPrinted = now;
        String line = bar(fraction(), TimeUnit.NANOSECONDS.toSeconds(now - startNanos), etaSeconds(), label, detail);
        if (terminal) {
            err.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
            lastLength = line.length();
        } else {
            err.println(line);
        }
        err.flush();
    }

    /** Ends the bar (the last step is done) and stops redrawing. */
    synchronized void finish() {
        if (finished) {
            return;
        }
        stepsDone = steps;
        label = "done";
        draw(true);
        finished = true;
        if (enabled && terminal) {
            err.println();
            err.flush();
        }
        if (ticker != null) {
            ticker.interrupt();
        }
    }

    @Override
    public void close() {
        finish();
    }
}

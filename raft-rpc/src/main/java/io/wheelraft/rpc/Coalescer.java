package io.wheelraft.rpc;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.ToIntFunction;

/**
 * Gathers the items that many threads send down one ordered sink (a gRPC stream) into batches,
 * so that one message carries what would otherwise be many.
 *
 * <ul>
 *   <li>An <em>urgent</em> item leaves at once, on the thread that adds it, together with
 *       everything queued before it. If another thread is already feeding the sink, it takes the
 *       item along instead, right after its current batch: under load the threads of a process
 *       hand their items to whichever one is sending, and batches form by themselves.</li>
 *   <li>Once the sink's event loop is known ({@link #sendOn}), an urgent item that finds no
 *       thread sending is sent by a task on that loop instead of on the adding thread. gRPC
 *       writes a stream's messages on its loop anyway, so this costs no extra wake-up; but what
 *       other threads (other groups' lanes, the loop's own later tasks) add before the task runs
 *       leaves in the same message. When many groups each send one item at about the same time
 *       (writes spread over groups), this turns one message per group into one per loop turn,
 *       and the busier the loop, the more each message carries.</li>
 *   <li>An item that may wait (a timer heartbeat, or the answer to one) waits at most
 *       {@code delay} for company: the first one queued schedules a flush. Heartbeats of many
 *       groups fire at independent moments; this is what lets one message per process pair
 *       carry them, instead of one message per group.</li>
 * </ul>
 *
 * <p>The sink sees the items in the order they were added, one batch at a time (never two
 * threads at once). A batch holds at most {@code maxBatchBytes} by {@code sizeOf}, except an item
 * over that on its own. After {@link #close()} queued items are dropped and new ones ignored
 * (their callers learn of the failure elsewhere: a dead stream fails its calls).
 *
 * <p>Thread-safe.
 */
final class Coalescer<T> {

    private static final Logger LOG = LoggerFactory.getLogger(Coalescer.class);
    /** Batches one thread sends before handing the rest to the scheduler (see {@link #drain()}). */
    static final int ROUNDS_PER_THREAD = 4;

    private final ScheduledExecutorService scheduler;
    private final long delayNanos;
    private final int maxBatchBytes;
    private final ToIntFunction<T> sizeOf;
    private final Consumer<List<T>> sink;
    /** Guarded by this. */
    private ArrayList<T> queued = new ArrayList<>();
    /** A thread is feeding the sink; it sends whatever is queued before it stops. Guarded by this. */
    private boolean flushing;
    /** A delayed flush is scheduled. Guarded by this. */
    private boolean flushScheduled;
    private boolean closed;
    /** Sends from a task on the sink's event loop once that is known; until then on the adding thread. */
    private final LoopWrite send = new LoopWrite(null, this::drain);

    /**
     * @param sink receives each batch; must not throw (a stream's send catches its own failures)
     */
    Coalescer(ScheduledExecutorService scheduler, long delayMs, int maxBatchBytes, ToIntFunction<T> sizeOf, Consumer<List<T>> sink) {
        if (delayMs < 0) {
            throw new IllegalArgumentException("delayMs must not be negative, was " + delayMs);
        }
        this.scheduler = scheduler;
        this.delayNanos = TimeUnit.MILLISECONDS.toNanos(delayMs);
        this.maxBatchBytes = maxBatchBytes;
        this.sizeOf = sizeOf;
        this.sink = sink;
    }

    /**
     * From now on, urgent items that find no thread sending are sent by a task on {@code sinkLoop}
     * (the event loop that writes the sink's messages); null keeps them on the adding thread.
     */
    void sendOn(Executor sinkLoop) {
        send.useLoop(sinkLoop);
    }

    /**
     * Queues {@code item}; an urgent one is sent before this returns (or by a task on the sink's
     * loop, once known), unless another thread is sending (then it takes it along).
     */
    void add(T item, boolean urgent) {
        if (offer(item, urgent)) {
            send();
        }
    }

    /**
     * Queues {@code item}; true if the caller must now call {@link #send()} (outside any lock of
     * its own, so that other threads can queue meanwhile and be taken along).
     */
    boolean offer(T item, boolean urgent) {
        synchronized (this) {
            if (closed) {
                return false;
            }
            queued.add(item);
            if (flushing) {
                return false; // the sending thread takes it along before it stops
            }
            if (!urgent && delayNanos > 0) {
                if (!flushScheduled) {
                    scheduleFlush();
                }
                return false;
            }
            flushing = true;
            return true;
        }
    }

    /**
     * Sends what is queued, after {@link #offer} said so: from a task on the sink's loop when it is
     * known (with whatever joins before the task runs), else here. Posting happens outside every
     * lock: waking the loop is a system call, and the callers' locks order other groups' sends.
     */
    void send() {
        send.request();
    }

    /** Drops what is queued; later items are ignored. */
    synchronized void close() {
        closed = true;
        queued = new ArrayList<>();
    }

    /** Items waiting (tests and diagnostics). */
    synchronized int queued() {
        return queued.size();
    }

    private void scheduleFlush() {
        try {
            scheduler.schedule(this::delayedFlush, delayNanos, TimeUnit.NANOSECONDS);
            flushScheduled = true;
        } catch (RejectedExecutionException e) {
            // The transport is closing; nothing will be sent any more.
        }
    }

    private void delayedFlush() {
        synchronized (this) {
            flushScheduled = false;
            if (flushing || queued.isEmpty()) {
                return;
            }
            flushing = true;
        }
        drain();
    }

    /**
     * Sends batches until nothing is queued; only from {@link #send}, a scheduled flush or a
     * hand-off. A thread sends at most {@link #ROUNDS_PER_THREAD} batches for others: one that keeps
     * finding more hands the rest to the scheduler, so that a busy stream cannot hold a caller (a
     * node's lane, or a transport I/O thread that other connections wait on) indefinitely.
     */
    void drain() {
        for (int round = 0; ; round++) {
            ArrayList<T> taken;
            synchronized (this) {
                if (queued.isEmpty() || closed) {
                    flushing = false;
                    return;
                }
                if (round == ROUNDS_PER_THREAD) {
                    handOff();
                    return;
                }
                taken = queued;
                queued = new ArrayList<>();
            }
            emit(taken);
        }
    }

    /** Under the lock, {@link #flushing} set: the scheduler's thread goes on sending. */
    private void handOff() {
        try {
            scheduler.execute(this::drain);
        } catch (RejectedExecutionException e) {
            flushing = false; // the transport is closing; nothing will be sent any more
        }
    }

    /** Hands {@code items} to the sink in pieces of at most {@link #maxBatchBytes}. */
    private void emit(List<T> items) {
        int from = 0;
        int bytes = 0;
        for (int i = 0; i < items.size(); i++) {
            int size = sizeOf.applyAsInt(items.get(i));
            if (i > from && bytes + size > maxBatchBytes) {
                deliver(items.subList(from, i));
                from = i;
                bytes = 0;
            }
            bytes += size;
        }
        deliver(from == 0 ? items : items.subList(from, items.size()));
    }

    private void deliver(List<T> batch) {
        try {
            sink.accept(batch);
        } catch (RuntimeException e) {
            // The sink's contract is not to throw; if it does, the batch is lost like a broken
            // stream's, and the senders' deadlines report it. Keep the sending going.
            LOG.warn("sending a batch of {} failed", batch.size(), e);
        }
    }
}

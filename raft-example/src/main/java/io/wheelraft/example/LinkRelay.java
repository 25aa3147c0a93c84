package io.wheelraft.example;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP relay that delays what it forwards, standing in for a slow link where the kernel has no
 * {@code sch_netem}. Each {@link #forward} opens a listening port; every connection accepted
 * there is joined to a new connection to the target, and the bytes are copied both ways. Each
 * chunk read (whatever one read returns, up to 16 KiB) is written on after a delay drawn for it,
 * but never before an earlier chunk of the same direction, so the byte stream stays in order as
 * on a real link. The end of a stream travels the same way: an orderly close is passed on as a
 * close (FIN) after the data before it, a reset as a reset (RST). When either side ends, both are
 * closed. Connection set-up is not delayed: the relay's kernel answers the SYN.
 *
 * <p>Threading: one daemon thread per listening port accepts; each relayed connection has a reader
 * and a writer thread per direction, ended when it closes. The counters may be read from any
 * thread. {@link #forward} and {@link #close} are called by one controller.
 */
final class LinkRelay implements AutoCloseable {

    /** Draws the delay of one chunk, in nanoseconds, never negative. Called concurrently. */
    interface DelayDraw {
        long nextNanos();
    }

    /** What the relay has done so far. Hold times run from reading a chunk to starting to write it on. */
    record Totals(long connections, long failedConnects, long chunks, long bytes, double minHoldMs, double meanHoldMs, double maxHoldMs) {
    }

    /** Chunks in flight per direction before the reader stops reading (and TCP pushes back on the sender). */
    private static final int QUEUE_CHUNKS = 256;
    private static final int CHUNK_BYTES = 16 * 1024;
    private static final int CONNECT_TIMEOUT_MS = 5_000;

    private final InetAddress bindAddress;
    private final DelayDraw draw;
    private final List<ServerSocket> listeners = new ArrayList<>();
    private final Set<Relayed> open = ConcurrentHashMap.newKeySet();
    private final LongAdder connections = new LongAdder();
    private final LongAdder failedConnects = new LongAdder();
    private final LongAdder chunks = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final LongAdder holdNanos = new LongAdder();
    private final AtomicLong minHold = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong maxHold = new AtomicLong();
    private volatile boolean closed;

    /**
     * @param bindAddress where the listening ports are opened and the relay's own connections to
     *                    the targets start from
     */
    LinkRelay(InetAddress bindAddress, DelayDraw draw) {
        this.bindAddress = bindAddress;
        this.draw = draw;
    }

    /** Delays drawn uniformly from {@code [minMs, maxMs]}. */
    static DelayDraw uniformMillis(int minMs, int maxMs) {
        if (minMs < 0 || maxMs < minMs) {
            throw new IllegalArgumentException("delay range [" + minMs + ", " + maxMs + "] ms");
        }
        long lo = minMs * 1_000_000L;
        long hi = maxMs * 1_000_000L;
        return () -> lo == hi ? lo : ThreadLocalRandom.current().nextLong(lo, hi + 1);
    }

    /**
     * Opens a port on the bind address that relays every connection to {@code target}; returns the port.
     *
     * @param label names the threads (e.g. {@code n1-n2})
     */
    int forward(InetSocketAddress target, String label) throws IOException {
        if (closed) {
            throw new IllegalStateException("relay closed");
        }
        ServerSocket listener = new ServerSocket();
        listener.bind(new InetSocketAddress(bindAddress, 0), 64);
        listeners.add(listener);
        Thread t = new Thread(() -> acceptLoop(listener, target, label), "link-relay-" + label);
        t.setDaemon(true);
        t.start();
        return listener.getLocalPort();
    }

    Totals totals() {
        long n = chunks.sum();
        long min = minHold.get();
        return new Totals(connections.sum(), failedConnects.sum(), n, bytes.sum(), n == 0 ? Double.NaN : min / 1e6,
                n == 0 ? Double.NaN : holdNanos.sum() / 1e6 / n, n == 0 ? Double.NaN : maxHold.get() / 1e6);
    }

    /** Stops accepting and closes every relayed connection (with a reset). */
    @Override
    public void close() {
        closed = true;
        for (ServerSocket s : listeners) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing: nothing left to do with it
            }
        }
        for (Relayed r : open) {
            r.close(true);
        }
    }

    private void acceptLoop(ServerSocket listener, InetSocketAddress target, String label) {
        while (!closed) {
            Socket accepted;
            try {
                accepted = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            Thread t = new Thread(() -> join(accepted, target, label), "link-relay-" + label + "-connect");
            t.setDaemon(true);
            t.start();
        }
    }

    /** Connects to the target for an accepted connection; if it cannot, resets the accepted one, as a refused connection would. */
    private void join(Socket accepted, InetSocketAddress target, String label) {
        Socket outbound = new Socket();
        try {
            accepted.setTcpNoDelay(true);
            outbound.setTcpNoDelay(true);
            outbound.bind(new InetSocketAddress(bindAddress, 0));
            outbound.connect(target, CONNECT_TIMEOUT_MS);
        } catch (IOException e) {
            failedConnects.increment();
            abort(accepted);
            abort(outbound);
            return;
        }
        connections.increment();
        Relayed r = new Relayed(accepted, outbound);
        open.add(r);
        if (closed) {
            r.close(true);
            return;
        }
        r.start(label);
    }

    private static void abort(Socket s) {
        try {
            if (!s.isClosed()) {
                s.setSoLinger(true, 0);
            }
        } catch (IOException ignored) {
            // a socket never connected has no linger to set
        }
        try {
            s.close();
        } catch (IOException ignored) {
            // closing: nothing left to do with it
        }
    }

    private void delivered(long readAt, long writeAt, int n) {
        long hold = writeAt - readAt;
        chunks.increment();
        bytes.add(n);
        holdNanos.add(hold);
        minHold.accumulateAndGet(hold, Math::min);
        maxHold.accumulateAndGet(hold, Math::max);
    }

    /** One chunk in flight; {@code data} null marks the end of the stream (a reset when {@code reset}). */
    private record Chunk(long readAt, long due, byte[] data, boolean reset) {
    }

    /** One relayed connection: two sockets, two delayed directions. */
    private final class Relayed {
        private final Socket a;
        private final Socket b;
        private final List<Thread> threads = new ArrayList<>();
        private boolean done;

        Relayed(Socket a, Socket b) {
            this.a = a;
            this.b = b;
        }

        void start(String label) {
            BlockingQueue<Chunk> ab = new ArrayBlockingQueue<>(QUEUE_CHUNKS);
            BlockingQueue<Chunk> ba = new ArrayBlockingQueue<>(QUEUE_CHUNKS);
            synchronized (this) {
                threads.add(thread(() -> read(a, ab), "link-relay-" + label + "-read-out"));
                threads.add(thread(() -> write(ab, b), "link-relay-" + label + "-write-out"));
                threads.add(thread(() -> read(b, ba), "link-relay-" + label + "-read-back"));
                threads.add(thread(() -> write(ba, a), "link-relay-" + label + "-write-back"));
                if (done) {
                    return;
                }
                threads.forEach(Thread::start);
            }
        }

        private Thread thread(Runnable r, String name) {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        }

        /** Reads chunks and queues each with its due time: its own delay, but not before the chunk ahead of it. */
        private void read(Socket from, BlockingQueue<Chunk> queue) {
            byte[] buf = new byte[CHUNK_BYTES];
            long lastDue = 0;
            boolean first = true;
            try {
                InputStream in = from.getInputStream();
                while (true) {
                    int n;
                    boolean reset = false;
                    try {
                        n = in.read(buf);
                    } catch (IOException e) {
                        if (isDone()) {
                            return;
                        }
                        n = -1;
                        reset = true;
                    }
                    long now = System.nanoTime();
                    long due = now + draw.nextNanos();
                    if (!first && due - lastDue < 0) {
                        due = lastDue;
                    }
                    first = false;
                    lastDue = due;
                    if (n < 0) {
                        queue.put(new Chunk(now, due, null, reset));
                        return;
                    }
                    queue.put(new Chunk(now, due, Arrays.copyOf(buf, n), false));
                }
            } catch (IOException e) {
                close(true);
            } catch (InterruptedException e) {
                // closed while the queue was full
            }
        }

        private void write(BlockingQueue<Chunk> queue, Socket to) {
            try {
                OutputStream out = to.getOutputStream();
                while (true) {
                    Chunk c = queue.take();
                    for (long left = c.due() - System.nanoTime(); left > 0; left = c.due() - System.nanoTime()) {
                        LockSupport.parkNanos(left);
                        if (Thread.interrupted()) {
                            return;
                        }
                    }
                    if (c.data() == null) {
                        close(c.reset());
                        return;
                    }
                    long writeAt = System.nanoTime();
                    out.write(c.data());
                    delivered(c.readAt(), writeAt, c.data().length);
                }
            } catch (IOException e) {
                close(true);
            } catch (InterruptedException e) {
                // closed
            }
        }

        private synchronized boolean isDone() {
            return done;
        }

        /** Closes both sides, with a reset when {@code reset} (else an orderly close), and stops the other threads. */
        void close(boolean reset) {
            List<Thread> others;
            synchronized (this) {
                if (done) {
                    return;
                }
                done = true;
                others = List.copyOf(threads);
            }
            open.remove(this);
            if (reset) {
                abort(a);
                abort(b);
            } else {
                closeQuietly(a);
                closeQuietly(b);
            }
            for (Thread t : others) {
                if (t != Thread.currentThread()) {
                    t.interrupt();
                }
            }
        }

        private void closeQuietly(Socket s) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing: nothing left to do with it
            }
        }
    }
}

package io.wheelraft.rpc;

import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoop;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.netty.shaded.io.netty.util.concurrent.EventExecutor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The Netty event loops a transport's server and outbound channels run on: either the
 * process-wide shared group ({@link RpcOptions#ioThreads()} 0: Netty's default size, about twice
 * the cores, threads {@code wheelraft-shared-io-N}, alive while any transport uses it), or a group
 * of the transport's own with a fixed number of threads ({@code wheelraft-io-N}), shared by its
 * server and its channels and shut down with the transport. Epoll where Netty's native transport
 * loads, NIO otherwise.
 *
 * <p>Why one group for both sides: a node answers on the thread that delivered the message that
 * completed the work (see docs/threads.md). When the connection a client's call came in on and
 * the channels to the followers share an event loop, the AppendEntries it sends and the reply it
 * finally writes are queued on the running loop instead of waking another one.
 *
 * <p>Why the transport always runs on loops it created (never gRPC's internal default group):
 * {@link #currentLoop()} must tell which loop the calling thread runs, and Netty answers that
 * only through an internal class. Each loop of a group made here records itself in a thread-local
 * with the first task it runs, before any channel is registered on it.
 *
 * <p>Thread-safe.
 */
final class TransportEventLoops implements AutoCloseable {

    /** The loop the current thread runs, set on each loop's own thread by its first task. */
    private static final ThreadLocal<EventLoop> LOOP_OF_THIS_THREAD = new ThreadLocal<>();

    /** The process-wide group for {@code ioThreads} 0, and how many transports hold it. */
    private static EventLoopGroup shared;
    private static int sharedUsers;

    private final EventLoopGroup group;
    private final boolean owned;
    private boolean closed;

    private TransportEventLoops(EventLoopGroup group, boolean owned) {
        this.group = group;
        this.owned = owned;
    }

    /** {@code threads} 0: the process-wide shared group; otherwise a group of that many threads named {@code wheelraft-io-N}. */
    static TransportEventLoops create(int threads) {
        if (threads == 0) {
            return new TransportEventLoops(acquireShared(), false);
        }
        return new TransportEventLoops(newGroup(threads, "wheelraft-io"), true);
    }

    /**
     * The event loop of one of these groups that runs the calling thread, or null on any other
     * thread. A task given to it runs later on this same thread, after the loop has finished what
     * it is doing now.
     */
    static Executor currentLoop() {
        return LOOP_OF_THIS_THREAD.get();
    }

    private static synchronized EventLoopGroup acquireShared() {
        if (shared == null) {
            shared = newGroup(0, "wheelraft-shared-io");
        }
        sharedUsers++;
        return shared;
    }

    private static synchronized void releaseShared() {
        if (--sharedUsers == 0) {
            shared.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            shared = null;
        }
    }

    /** {@code threads} 0: Netty's default count. */
    private static EventLoopGroup newGroup(int threads, String name) {
        DefaultThreadFactory names = new DefaultThreadFactory(name, true);
        EventLoopGroup group = Epoll.isAvailable() ? new EpollEventLoopGroup(threads, names) : new NioEventLoopGroup(threads, names);
        for (EventExecutor executor : group) {
            EventLoop loop = (EventLoop) executor;
            // The loop's thread starts with this task, so the mark is there before any I/O runs on it.
            loop.execute(() -> LOOP_OF_THIS_THREAD.set(loop));
        }
        return group;
    }

    /** The group's event loops (for {@link IoLag}'s probes). */
    List<Executor> loops() {
        List<Executor> out = new ArrayList<>();
        for (EventExecutor executor : group) {
            out.add(executor);
        }
        return out;
    }

    NettyServerBuilder applyTo(NettyServerBuilder b) {
        return b.bossEventLoopGroup(group).workerEventLoopGroup(group)
                .channelType(group instanceof EpollEventLoopGroup ? EpollServerSocketChannel.class : NioServerSocketChannel.class);
    }

    /** A plain Netty client bootstrap on these loops (for {@link PeerGoneProbe}). */
    io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap applyTo(io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap b) {
        return b.group(group).channel(group instanceof EpollEventLoopGroup ? EpollSocketChannel.class : NioSocketChannel.class);
    }

    NettyChannelBuilder applyTo(NettyChannelBuilder b) {
        return b.eventLoopGroup(group).channelType(group instanceof EpollEventLoopGroup ? EpollSocketChannel.class : NioSocketChannel.class);
    }

    /**
     * Stops the owned group, or lets go of the shared one (the last transport to let go stops it);
     * call after the server and channels are shut down. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (owned) {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        } else {
            releaseShared();
        }
    }
}

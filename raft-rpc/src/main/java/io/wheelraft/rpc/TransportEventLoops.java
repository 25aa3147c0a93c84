package io.wheelraft.rpc;

import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;

import java.util.concurrent.TimeUnit;

/**
 * The Netty event loops a transport's server and outbound channels run on: either gRPC's
 * process-wide default group ({@link RpcOptions#ioThreads()} 0), or a group of the transport's
 * own with a fixed number of threads, shared by its server and its channels and shut down with
 * the transport. Epoll where Netty's native transport loads, NIO otherwise.
 *
 * <p>Why one group for both sides: a node answers on the thread that delivered the message that
 * completed the work (see docs/threads.md). When the connection a client's call came in on and
 * the channels to the followers share an event loop, the AppendEntries it sends and the reply it
 * finally writes are queued on the running loop instead of waking another one.
 */
final class TransportEventLoops implements AutoCloseable {

    private final EventLoopGroup group; // null: gRPC's shared default

    private TransportEventLoops(EventLoopGroup group) {
        this.group = group;
    }

    /** {@code threads} 0: gRPC's default group; otherwise a group of that many threads named {@code wheelraft-io-N}. */
    static TransportEventLoops create(int threads) {
        if (threads == 0) {
            return new TransportEventLoops(null);
        }
        DefaultThreadFactory names = new DefaultThreadFactory("wheelraft-io", true);
        return new TransportEventLoops(Epoll.isAvailable() ? new EpollEventLoopGroup(threads, names) : new NioEventLoopGroup(threads, names));
    }

    NettyServerBuilder applyTo(NettyServerBuilder b) {
        if (group != null) {
            b.bossEventLoopGroup(group).workerEventLoopGroup(group)
                    .channelType(group instanceof EpollEventLoopGroup ? EpollServerSocketChannel.class : NioServerSocketChannel.class);
        }
        return b;
    }

    NettyChannelBuilder applyTo(NettyChannelBuilder b) {
        if (group != null) {
            b.eventLoopGroup(group).channelType(group instanceof EpollEventLoopGroup ? EpollSocketChannel.class : NioSocketChannel.class);
        }
        return b;
    }

    /** Whether this transport owns its loops (for tests and logs). */
    boolean owned() {
        return group != null;
    }

    /** Stops the owned group, if any; call after the server and channels are shut down. */
    @Override
    public void close() {
        if (group != null) {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        }
    }
}

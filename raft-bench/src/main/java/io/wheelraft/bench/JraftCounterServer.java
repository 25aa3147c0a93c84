package io.wheelraft.bench;

import com.alipay.sofa.jraft.Closure;
import com.alipay.sofa.jraft.Iterator;
import com.alipay.sofa.jraft.Node;
import com.alipay.sofa.jraft.RaftGroupService;
import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.conf.Configuration;
import com.alipay.sofa.jraft.core.StateMachineAdapter;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.entity.Task;
import com.alipay.sofa.jraft.option.NodeOptions;
import com.alipay.sofa.jraft.rpc.RaftRpcServerFactory;
import com.alipay.sofa.jraft.rpc.RpcContext;
import com.alipay.sofa.jraft.rpc.RpcProcessor;
import com.alipay.sofa.jraft.rpc.RpcServer;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * One SOFAJRaft counter node for the benchmark, written on SOFAJRaft's public API: a
 * {@link RaftGroupService} with the default RocksDB log storage (fsync on: {@code RaftOptions.sync}
 * defaults to true), the given election timeout, Bolt RPC on one port serving both Raft and an
 * increment processor. No snapshots (none of the three systems takes one during a run).
 *
 * <p>Usage: {@code JraftCounterServer DATA_DIR SELF(host:port) PEERS(host:port,...) ELECTION_TIMEOUT_MS}.
 * Runs until killed.
 */
public final class JraftCounterServer {

    static final String GROUP = "counter";

    private JraftCounterServer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            throw new IllegalArgumentException("usage: JraftCounterServer DATA_DIR SELF PEERS ELECTION_TIMEOUT_MS, got " + args.length + " arguments");
        }
        Path data = Path.of(args[0]);
        Files.createDirectories(data);
        PeerId self = PeerId.parsePeer(args[1]);
        Configuration conf = new Configuration();
        if (self == null || !conf.parse(args[2])) {
            throw new IllegalArgumentException("bad address: self '" + args[1] + "', peers '" + args[2] + "'");
        }
        CounterFsm fsm = new CounterFsm();
        NodeOptions options = new NodeOptions();
        options.setElectionTimeoutMs(Integer.parseInt(args[3]));
        options.setInitialConf(conf);
        options.setFsm(fsm);
        options.setLogUri(data.resolve("log").toString());
        options.setRaftMetaUri(data.resolve("meta").toString());
        RpcServer rpc = RaftRpcServerFactory.createRaftRpcServer(self.getEndpoint());
        NodeHolder holder = new NodeHolder();
        rpc.registerProcessor(new IncrementProcessor(holder));
        RaftGroupService group = new RaftGroupService(GROUP, self, options, rpc);
        holder.node = group.start();
        System.out.println("jraft counter node " + self + " started, data " + data.toAbsolutePath() + File.separator);
        new CountDownLatch(1).await(); // serve until the process is killed
    }

    /** The node, published once started (the processor may see requests before that). */
    private static final class NodeHolder {
        volatile Node node;
    }

    /** The counter: applies 8-byte deltas in log order and answers each leader-side closure. */
    static final class CounterFsm extends StateMachineAdapter {
        private long value;

        @Override
        public void onApply(Iterator iter) {
            while (iter.hasNext()) {
                value += iter.getData().getLong(0);
                Closure done = iter.done();
                if (done != null) {
                    ((IncrementClosure) done).value = value;
                    done.run(Status.OK());
                }
                iter.next();
            }
        }
    }

    /** Runs on the leader once its task is applied (or has failed): answers the client. */
    private static final class IncrementClosure implements Closure {
        private final RpcContext ctx;
        private final Node node;
        long value;

        IncrementClosure(RpcContext ctx, Node node) {
            this.ctx = ctx;
            this.node = node;
        }

        @Override
        public void run(Status status) {
            if (status.isOk()) {
                ctx.sendResponse(JraftMessages.IncrementResponse.ok(value));
            } else {
                PeerId leader = node.getLeaderId();
                ctx.sendResponse(JraftMessages.IncrementResponse.refused(leader == null ? null : leader.toString(), status.toString()));
            }
        }
    }

    /** Bolt processor for increments: a leader proposes the 8-byte delta; others redirect. */
    private static final class IncrementProcessor implements RpcProcessor<JraftMessages.IncrementRequest> {
        private final NodeHolder holder;

        IncrementProcessor(NodeHolder holder) {
            this.holder = holder;
        }

        @Override
        public void handleRequest(RpcContext ctx, JraftMessages.IncrementRequest request) {
            Node node = holder.node;
            if (node == null || !node.isLeader()) {
                PeerId leader = node == null ? null : node.getLeaderId();
                ctx.sendResponse(JraftMessages.IncrementResponse.refused(leader == null ? null : leader.toString(), "not the leader"));
                return;
            }
            ByteBuffer delta = ByteBuffer.allocate(Long.BYTES).putLong(0, request.delta);
            Task task = new Task();
            task.setData(delta);
            task.setDone(new IncrementClosure(ctx, node));
            node.apply(task);
        }

        @Override
        public String interest() {
            return JraftMessages.IncrementRequest.class.getName();
        }
    }
}

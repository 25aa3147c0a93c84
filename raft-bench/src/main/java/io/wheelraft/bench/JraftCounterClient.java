package io.wheelraft.bench;

import com.alipay.sofa.jraft.RouteTable;
import com.alipay.sofa.jraft.conf.Configuration;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.option.CliOptions;
import com.alipay.sofa.jraft.rpc.InvokeCallback;
import com.alipay.sofa.jraft.rpc.impl.cli.CliClientServiceImpl;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Drives {@link JraftCounterServer}s through SOFAJRaft's client API: the leader is found with
 * {@link RouteTable#refreshLeader} over a {@link CliClientServiceImpl}, and increments go to it
 * with Bolt's {@code invokeAsync}. A refusal naming another leader moves the target there.
 *
 * <p>Thread-safe.
 */
final class JraftCounterClient implements CounterClient {

    private static final int TIMEOUT_MS = 5_000;

    private final CliClientServiceImpl cli = new CliClientServiceImpl();
    private final List<String> endpoints;
    private volatile PeerId leader;

    JraftCounterClient(List<String> endpoints) {
        this.endpoints = List.copyOf(endpoints);
        Configuration conf = new Configuration();
        if (!conf.parse(String.join(",", endpoints))) {
            throw new IllegalArgumentException("bad SOFAJRaft peer list " + endpoints);
        }
        RouteTable.getInstance().updateConfiguration(JraftCounterServer.GROUP, conf);
        if (!cli.init(new CliOptions())) {
            throw new IllegalStateException("SOFAJRaft CLI client service did not start");
        }
    }

    @Override
    public void awaitLeader(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no attempt";
        // Bolt logs an error for every connection it is refused, so the leader poll starts once
        // every server listens instead of logging some thirty refusals per server at start-up.
        if (!ServerCluster.awaitListening(endpoints, deadline)) {
            throw new IllegalStateException("SOFAJRaft: not every server of " + endpoints + " listened within " + timeout);
        }
        while (System.nanoTime() - deadline < 0) {
            try {
                if (RouteTable.getInstance().refreshLeader(cli, JraftCounterServer.GROUP, 1000).isOk()) {
                    leader = RouteTable.getInstance().selectLeader(JraftCounterServer.GROUP);
                    increment(0).get(TIMEOUT_MS + 1000, TimeUnit.MILLISECONDS);
                    return;
                }
                last = "no leader yet";
            } catch (TimeoutException | ExecutionException e) {
                last = String.valueOf(e.getCause() == null ? e : e.getCause());
            }
            Thread.sleep(50); // an election is running; poll again shortly
        }
        throw new IllegalStateException("SOFAJRaft: no leader acknowledged an increment within " + timeout + "; last: " + last);
    }

    @Override
    public CompletableFuture<Long> increment(int slot) {
        CompletableFuture<Long> result = new CompletableFuture<>();
        PeerId target = leader;
        try {
            cli.getRpcClient().invokeAsync(target.getEndpoint(), new JraftMessages.IncrementRequest(1), new InvokeCallback() {
                @Override
                public void complete(Object answer, Throwable error) {
                    if (error != null) {
                        result.completeExceptionally(error);
                        return;
                    }
                    JraftMessages.IncrementResponse r = (JraftMessages.IncrementResponse) answer;
                    if (r.success) {
                        result.complete(r.value);
                        return;
                    }
                    if (r.redirect != null) {
                        PeerId hinted = PeerId.parsePeer(r.redirect);
                        if (hinted != null) {
                            leader = hinted;
                        }
                    }
                    result.completeExceptionally(new IllegalStateException(target + " refused: " + r.error));
                }

                @Override
                public Executor executor() {
                    return null; // run on Bolt's callback thread: the callback only records and sends the next request
                }
            }, TIMEOUT_MS);
        } catch (Exception e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    @Override
    public void close() {
        cli.shutdown();
    }
}

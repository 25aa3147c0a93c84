package io.wheelraft.example;

import io.grpc.StatusRuntimeException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/**
 * {@code status}: one line per address of {@code --peers}, in order (see {@link StatusLines}):
 * {@code ADDRESS ROLE term=N commit=N last=N leader=ADDRESS|none}, or {@code ADDRESS down (WHY)}
 * when the node does not answer. Exit 0 when at least one node answered, else 1.
 */
@Command(name = "status", description = "Show each node's role, term, commit and last log index, and leader.", mixinStandardHelpOptions = true)
final class StatusCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--peers", required = true, paramLabel = "LIST", description = "The nodes to ask, HOST:PORT,...; one line each, in this order.")
    String peers;

    @Option(names = "--timeout-ms", defaultValue = "2000", paramLabel = "N", description = "How long to wait for each node's answer.")
    long timeoutMs;

    @Option(names = "--groups", defaultValue = "false", description = "One line per address about all its groups instead: ADDRESS groups=N leaders=L quiet=Q, or ADDRESS down.")
    boolean groups;

    @Override
    public Integer call() {
        List<String> endpoints = Addresses.endpoints(Addresses.parseList("--peers", peers));
        if (timeoutMs <= 0) {
            throw CliException.usage("--timeout-ms must be positive, was " + timeoutMs);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (groups) {
            return groupsStatus(endpoints, out);
        }
        List<StatusLines.Answer> answers = new ArrayList<>();
        try (ClusterChannels cluster = new ClusterChannels(endpoints)) {
            List<CompletableFuture<StatusLines.Answer>> pending = new ArrayList<>();
            for (String e : endpoints) {
                pending.add(CompletableFuture.supplyAsync(() -> ask(cluster, e)));
            }
            pending.forEach(f -> answers.add(f.join()));
        }
        StatusLines.lines(answers).forEach(out::println);
        out.flush();
        if (answers.stream().noneMatch(StatusLines.Answer::answered)) {
            if (answers.stream().allMatch(a -> NO_SINGLE_COUNTER.equals(a.whyDown()))) {
                throw CliException.failed("no node of " + String.join(",", endpoints)
                        + " hosts the single counter: servers started with --groups N answer status --groups");
            }
            throw CliException.failed("no node of " + String.join(",", endpoints) + " answered");
        }
        return 0;
    }

    /** {@code --groups}: one summary per process, asked of all at once. */
    private int groupsStatus(List<String> endpoints, PrintWriter out) {
        List<GroupsStatusLines.Answer> answers = new ArrayList<>();
        try (ClusterChannels cluster = new ClusterChannels(endpoints)) {
            List<CompletableFuture<GroupsStatusLines.Answer>> pending = new ArrayList<>();
            for (String e : endpoints) {
                pending.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return new GroupsStatusLines.Answer(e, cluster.groupsSummary(e, timeoutMs));
                    } catch (RuntimeException down) {
                        return new GroupsStatusLines.Answer(e, null);
                    }
                }));
            }
            pending.forEach(f -> answers.add(f.join()));
        }
        GroupsStatusLines.lines(answers).forEach(out::println);
        out.flush();
        if (answers.stream().noneMatch(GroupsStatusLines.Answer::answered)) {
            throw CliException.failed("no node of " + String.join(",", endpoints) + " answered");
        }
        return 0;
    }

    private StatusLines.Answer ask(ClusterChannels cluster, String endpoint) {
        try {
            return StatusLines.Answer.of(endpoint, cluster.status(endpoint, timeoutMs));
        } catch (StatusRuntimeException e) {
            return StatusLines.Answer.down(endpoint, whyDown(e.getStatus().getCode(), timeoutMs));
        } catch (RuntimeException e) {
            return StatusLines.Answer.down(endpoint, "unreachable");
        }
    }

    /** What a server that answers but hosts no single counter (one started with {@code --groups N}) is down for. */
    static final String NO_SINGLE_COUNTER = "answers, but hosts no single counter: a server started with --groups N? use status --groups";

    /** Why a node gave no status: NOT_FOUND comes from a server that answers without the single counter. */
    static String whyDown(io.grpc.Status.Code code, long timeoutMs) {
        return switch (code) {
            case DEADLINE_EXCEEDED -> "no answer within " + timeoutMs + " ms";
            case NOT_FOUND -> NO_SINGLE_COUNTER;
            default -> "unreachable";
        };
    }
}

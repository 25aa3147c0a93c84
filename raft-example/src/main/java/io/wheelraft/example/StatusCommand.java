package io.wheelraft.example;

import io.wheelraft.proto.NodeStatusResponse;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/**
 * {@code status}: one line per address of {@code --peers}, in order:
 * {@code ADDRESS ROLE term=N commit=N last=N leader=ADDRESS|none}; ROLE {@code down} when the node
 * does not answer. Exit 0 when at least one node answered, else 1.
 */
@Command(name = "status", description = "Show each node's role, term, commit and last log index, and leader.", mixinStandardHelpOptions = true)
final class StatusCommand implements Callable<Integer> {

    /** Labels a node may answer with (Role.label()); anything else is printed as {@code unknown(<label>)}. */
    private static final Set<String> ROLES = Set.of("leader", "follower", "candidate", "learner", "repairing", "error", "shutdown");

    @Spec
    CommandSpec spec;

    @Option(names = "--peers", required = true, paramLabel = "LIST")
    String peers;

    @Option(names = "--timeout-ms", defaultValue = "2000", paramLabel = "N")
    long timeoutMs;

    @Override
    public Integer call() {
        List<String> endpoints = Addresses.endpoints(Addresses.parseList("--peers", peers));
        if (timeoutMs <= 0) {
            throw CliException.usage("--timeout-ms must be positive, was " + timeoutMs);
        }
        PrintWriter out = spec.commandLine().getOut();
        boolean anyAnswered = false;
        try (ClusterChannels cluster = new ClusterChannels(endpoints)) {
            List<CompletableFuture<String>> lines = new ArrayList<>();
            for (String e : endpoints) {
                lines.add(CompletableFuture.supplyAsync(() -> line(cluster, e)));
            }
            for (CompletableFuture<String> f : lines) {
                String l = f.join();
                anyAnswered |= !l.contains(" down ");
                out.println(l);
            }
        }
        out.flush();
        if (!anyAnswered) {
            throw CliException.failed("no node of " + String.join(",", endpoints) + " answered");
        }
        return 0;
    }

    private String line(ClusterChannels cluster, String endpoint) {
        try {
            return format(endpoint, cluster.status(endpoint, timeoutMs));
        } catch (RuntimeException e) {
            return endpoint + " down term=0 commit=0 last=0 leader=none";
        }
    }

    static String format(String endpoint, NodeStatusResponse s) {
        // A node that answers is never "down": a role this build does not know (a newer node) is shown as it came.
        String role = ROLES.contains(s.getRole()) ? s.getRole()
                : "unknown(" + s.getRole().replaceAll("[^A-Za-z0-9_-]", "").toLowerCase(java.util.Locale.ROOT) + ")";
        String leader = s.getLeader().isEmpty() ? (role.equals("leader") ? endpoint : "none") : s.getLeader();
        return endpoint + " " + role + " term=" + s.getTerm() + " commit=" + s.getCommitIndex() + " last=" + s.getLastLogIndex()
                + " leader=" + leader;
    }
}

package io.wheelraft.example;

import io.grpc.StatusRuntimeException;
import io.wheelraft.core.PeerId;
import io.wheelraft.proto.AdminResult;
import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.NodeStatusResponse;
import io.wheelraft.rpc.AdminClient;
import io.wheelraft.rpc.RpcOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code admin}: membership and operations through raft-rpc's admin service. Prints one line on
 * standard output, {@code ok ...} or {@code fail ...}, and exits 1 if the operation did not
 * happen. {@code add-peer} first adds the node as a learner and waits until it has caught up,
 * then makes it a voter; adding a current member succeeds and changes nothing. {@code add-witness}
 * adds a voting witness (it holds no data and never leads); {@code set-priority HOST:PORT N} sets a
 * member's election priority in the replicated configuration (0: never leads).
 */
@Command(name = "admin", description = "add-peer | remove-peer | add-learner | add-witness | transfer-leader | snapshot HOST:PORT, "
        + "or set-priority HOST:PORT N", mixinStandardHelpOptions = true)
final class AdminCommand implements Callable<Integer> {

    private static final List<String> OPERATIONS = List.of("add-peer", "remove-peer", "add-learner", "add-witness", "set-priority",
            "transfer-leader", "snapshot");

    @Spec
    CommandSpec spec;

    @Option(names = "--peers", required = true, paramLabel = "LIST", description = "The current members, HOST:PORT,...")
    String peers;

    @Option(names = "--timeout-ms", defaultValue = "30000", paramLabel = "N", description = "How long the operation may take (an add-peer includes the new node catching up).")
    long timeoutMs;

    @Parameters(index = "0", paramLabel = "OPERATION",
            description = "add-peer | remove-peer | add-learner | add-witness | set-priority | transfer-leader | snapshot")
    String operation;

    @Parameters(index = "1", paramLabel = "HOST:PORT", description = "The node the operation is about.")
    String target;

    @Parameters(index = "2", arity = "0..1", paramLabel = "N", description = "set-priority only: the priority, 0 (never leads) or more.")
    String value;

    private PrintWriter out;

    @Override
    public Integer call() throws Exception {
        List<String> endpoints = Addresses.endpoints(Addresses.parseList("--peers", peers));
        if (!OPERATIONS.contains(operation)) {
            throw CliException.usage("unknown admin operation '" + operation + "'; expected one of " + String.join(", ", OPERATIONS));
        }
        PeerId peer = Addresses.parse(operation, target);
        Integer priority = priorityArgument();
        if (timeoutMs <= 0) {
            throw CliException.usage("--timeout-ms must be positive, was " + timeoutMs);
        }
        out = spec.commandLine().getOut();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        try (ClusterChannels cluster = new ClusterChannels(endpoints)) {
            if (operation.equals("snapshot")) {
                return answer(onNode(peer.endpoint(), c -> c.snapshot(CounterServiceImpl.GROUP_ID, "", remaining(deadline))),
                        "snapshot taken on " + peer.endpoint());
            }
            NodeStatusResponse leader = findLeader(cluster, endpoints);
            return switch (operation) {
                case "add-peer" -> addPeer(cluster, leader, peer, deadline);
                case "remove-peer" -> answer(onNode(leader.getSelf(), c -> c.removePeer(CounterServiceImpl.GROUP_ID, "", peer.toString(),
                        remaining(deadline))), "removed " + peer + " (the new configuration is committed)");
                case "add-learner" -> answer(onNode(leader.getSelf(), c -> c.addLearners(CounterServiceImpl.GROUP_ID, "", List.of(peer.toString()),
                        remaining(deadline))), "added " + peer + " as a learner");
                case "add-witness" -> addWitness(leader, peer, deadline);
                case "set-priority" -> setPriority(leader, peer, priority, deadline);
                default -> transferLeader(cluster, leader, peer, deadline);
            };
        }
    }

    /** The N of {@code set-priority HOST:PORT N}; null for the other operations, which take no N. */
    private Integer priorityArgument() {
        if (!operation.equals("set-priority")) {
            if (value != null) {
                throw CliException.usage(operation + " takes one HOST:PORT; '" + value + "' is one argument too many");
            }
            return null;
        }
        if (value == null) {
            throw CliException.usage("set-priority needs the priority after the address: set-priority HOST:PORT N");
        }
        int n;
        try {
            n = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw CliException.usage("set-priority: the priority '" + value + "' is not a whole number");
        }
        if (n < 0) {
            throw CliException.usage("set-priority: the priority must be 0 (never leads) or more, was " + n);
        }
        return n;
    }

    private int addWitness(NodeStatusResponse leader, PeerId peer, long deadline) {
        ConfigurationEntry c = leader.getConfiguration();
        String p = peer.toString();
        if (c.getWitnessesList().contains(p) && c.getPeersList().contains(p)) {
            return ok(peer + " is already a witness; nothing changed");
        }
        if (c.getPeersList().contains(p) || c.getLearnersList().contains(p)) {
            return fail(peer + " is already a member holding data; a data member cannot become a witness: remove it first (admin"
                    + " remove-peer " + p + "), wipe its data, start it with --witnesses naming it, then add it with add-witness");
        }
        return answer(onNode(leader.getSelf(), cl -> cl.addWitness(CounterServiceImpl.GROUP_ID, "", p, remaining(deadline))),
                "added " + peer + " as a witness (the new configuration is committed)");
    }

    private int setPriority(NodeStatusResponse leader, PeerId peer, int priority, long deadline) {
        ConfigurationEntry c = leader.getConfiguration();
        String p = peer.toString();
        if (!c.getPeersList().contains(p) && !c.getLearnersList().contains(p)) {
            return fail(peer + " is not a member of the configuration (" + String.join(",", c.getPeersList()) + "); add it first");
        }
        if (priority > 0 && c.getWitnessesList().contains(p)) {
            return fail(peer + " is a witness, which never leads; only priority 0 applies to it");
        }
        return answer(onNode(leader.getSelf(), cl -> cl.setPriority(CounterServiceImpl.GROUP_ID, "", p, priority, remaining(deadline))),
                "priority of " + peer + " is " + priority + " (the new configuration is committed)");
    }

    private int addPeer(ClusterChannels cluster, NodeStatusResponse leader, PeerId peer, long deadline) throws InterruptedException {
        if (leader.getConfiguration().getPeersList().contains(peer.toString())) {
            return ok(peer + " is already a member; nothing changed");
        }
        if (!leader.getConfiguration().getLearnersList().contains(peer.toString())) {
            AdminResult learner = onNode(leader.getSelf(), c -> c.addLearners(CounterServiceImpl.GROUP_ID, "", List.of(peer.toString()),
                    remaining(deadline)));
            if (!learner.getSuccess()) {
                return fail("could not add " + peer + " as a learner: " + describe(learner));
            }
        }
        // Catch the new node up as a learner first, so the voting quorum never waits for it.
        while (true) {
            NodeStatusResponse s = cluster.status(leader.getSelf(), remaining(deadline));
            Long match = s.getFollowerMatchIndexMap().get(peer.toString());
            if (match != null && match >= s.getCommitIndex()) {
                break;
            }
            if (remaining(deadline) <= 1) {
                return fail(peer + " did not catch up as a learner within " + timeoutMs + " ms (replicated up to "
                        + (match == null ? "nothing" : match) + " of " + s.getCommitIndex() + ")");
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
        return answer(onNode(leader.getSelf(), c -> c.addPeer(CounterServiceImpl.GROUP_ID, "", peer.toString(), remaining(deadline))),
                "added " + peer + " as a member (caught up first; the new configuration is committed)");
    }

    private int transferLeader(ClusterChannels cluster, NodeStatusResponse leader, PeerId peer, long deadline) throws InterruptedException {
        if (leader.getSelf().equals(peer.toString())) {
            return ok(peer + " already leads in term " + leader.getTerm());
        }
        // A stopped node cannot answer the leader's TimeoutNow, so the leader would only learn it by
        // a timeout; the node itself still answers status, so say why at once.
        Optional<String> refusal = tryStatus(cluster, peer.endpoint(), deadline).flatMap(AdminCommand::cannotLead);
        if (refusal.isPresent()) {
            return fail("could not transfer leadership to " + peer + ": " + refusal.get());
        }
        AdminResult r = onNode(leader.getSelf(), c -> c.transferLeader(CounterServiceImpl.GROUP_ID, "", peer.toString(), remaining(deadline)));
        if (!r.getSuccess()) {
            return fail("could not transfer leadership to " + peer + ": " + describe(r));
        }
        while (true) {
            Optional<NodeStatusResponse> s = tryStatus(cluster, peer.endpoint(), deadline);
            if (s.isPresent() && s.get().getRole().equals("leader")) {
                return ok(peer + " leads in term " + s.get().getTerm());
            }
            if (remaining(deadline) <= 1) {
                return fail(peer + " did not become leader within " + timeoutMs + " ms");
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }

    /** Why a node that answered with {@code status} cannot take leadership, if it cannot. */
    static Optional<String> cannotLead(NodeStatusResponse target) {
        return switch (target.getRole()) {
            case "error" -> Optional.of("it stopped after an unrecoverable error (role error; its log says why); restart it once the cause is fixed");
            case "repairing" -> Optional.of("it is repairing its log after a storage fault (role repairing) and cannot lead until the leader has caught it up");
            case "shutdown" -> Optional.of("it is shutting down");
            case "witness" -> Optional.of("it is a witness, which holds no data and never leads");
            default -> Optional.empty();
        };
    }

    private NodeStatusResponse findLeader(ClusterChannels cluster, List<String> endpoints) {
        NodeStatusResponse best = null;
        int answered = 0;
        for (String e : endpoints) {
            try {
                NodeStatusResponse s = cluster.status(e, 2000);
                answered++;
                if (s.getRole().equals("leader") && (best == null || s.getTerm() > best.getTerm())) {
                    best = s;
                }
            } catch (StatusRuntimeException ex) {
                // down: try the others
            }
        }
        if (answered == 0) {
            throw CliException.failed("fail cluster unreachable: no node of " + String.join(",", endpoints) + " answered");
        }
        if (best == null) {
            throw CliException.failed("fail no leader among " + String.join(",", endpoints) + " (an election may be running; retry)");
        }
        return best;
    }

    private static Optional<NodeStatusResponse> tryStatus(ClusterChannels cluster, String endpoint, long deadline) {
        try {
            return Optional.of(cluster.status(endpoint, Math.min(1000, remaining(deadline))));
        } catch (StatusRuntimeException e) {
            return Optional.empty();
        }
    }

    private interface AdminCall {
        AdminResult call(AdminClient client);
    }

    private static AdminResult onNode(String endpoint, AdminCall call) {
        try (AdminClient client = new AdminClient(endpoint, RpcOptions.defaults())) {
            return call.call(client);
        } catch (StatusRuntimeException e) {
            return AdminResult.newBuilder().setSuccess(false).setError(e.getStatus().getCode().name())
                    .setMessage(endpoint + (e.getStatus().getCode() == io.grpc.Status.Code.INVALID_ARGUMENT ? " refused the request: " : " did not answer: ") + (e.getStatus().getDescription() == null ? "" : e.getStatus().getDescription())).build();
        }
    }

    private int answer(AdminResult r, String success) {
        return r.getSuccess() ? ok(success) : fail(describe(r));
    }

    private static String describe(AdminResult r) {
        return r.getError() + ": " + r.getMessage() + (r.getLeaderHint().isEmpty() ? "" : " (leader " + r.getLeaderHint() + ")");
    }

    private int ok(String line) {
        out.println("ok " + line);
        out.flush();
        return 0;
    }

    private int fail(String line) {
        out.println("fail " + line);
        out.flush();
        return CliException.FAILED;
    }

    private static long remaining(long deadline) {
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }
}

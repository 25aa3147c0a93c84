package io.wheelraft.example;

import io.wheelraft.proto.ConfigurationEntry;
import io.wheelraft.proto.NodeStatusResponse;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Turns the nodes' answers to {@code status} into the contract's lines, one per address in the
 * order of {@code --peers}:
 * <ul>
 *   <li>{@code ADDRESS ROLE term=N commit=N last=N leader=ADDRESS|none} for a node that answered,
 *       ROLE one of {@code leader follower candidate learner witness removed repairing error shutdown}
 *       ({@code witness}: a member that votes but holds no data, as its configuration marks it);</li>
 *   <li>{@code ADDRESS down (WHY)} for one that did not: nothing about it is known, so no
 *       figures are printed rather than made-up zeros; WHY is {@code unreachable},
 *       {@code no answer within N ms}, or for a server that answers without hosting the single
 *       counter (one started with {@code --groups N}) a line that says so.</li>
 * </ul>
 * A node is {@code removed} when it answered, is not the leader, and is listed nowhere (neither
 * voter nor learner) in the configuration of the leader that answered (the highest term's), or,
 * with no leader answering, in its own latest configuration; a node whose own configuration is
 * still empty was never a member (it waits to be added) and keeps its role. Stateless.
 */
final class StatusLines {

    /** Roles printed as answered (Role.label()); a role this build does not know shows as {@code unknown(x)}. */
    private static final Set<String> ROLES = Set.of("leader", "follower", "candidate", "learner", "witness", "repairing", "error",
            "shutdown");

    private StatusLines() {
    }

    /** What one address answered: a status, or why there was none. */
    record Answer(String endpoint, NodeStatusResponse status, String whyDown) {
        static Answer of(String endpoint, NodeStatusResponse status) {
            return new Answer(endpoint, status, null);
        }

        static Answer down(String endpoint, String why) {
            return new Answer(endpoint, null, why);
        }

        boolean answered() {
            return status != null;
        }
    }

    static List<String> lines(List<Answer> answers) {
        NodeStatusResponse leader = null;
        for (Answer a : answers) {
            if (a.answered() && a.status().getRole().equals("leader") && (leader == null || a.status().getTerm() > leader.getTerm())) {
                leader = a.status();
            }
        }
        List<String> out = new ArrayList<>(answers.size());
        for (Answer a : answers) {
            out.add(a.answered() ? line(a.endpoint(), a.status(), leader) : a.endpoint() + " down (" + a.whyDown() + ")");
        }
        return out;
    }

    private static String line(String endpoint, NodeStatusResponse s, NodeStatusResponse leader) {
        // A node that answers is never "down": a stopped (error) or fenced (repairing) node says so,
        // and a role from a newer build is shown as it came rather than hidden.
        String role = ROLES.contains(s.getRole()) ? s.getRole()
                : "unknown(" + s.getRole().replaceAll("[^A-Za-z0-9_-]", "").toLowerCase(java.util.Locale.ROOT) + ")";
        if ((role.equals("follower") || role.equals("candidate") || role.equals("learner") || role.equals("witness"))
                && removed(s, leader)) {
            role = "removed";
        }
        String leaderText = s.getLeader().isEmpty() ? (role.equals("leader") ? endpoint : "none") : s.getLeader();
        return endpoint + " " + role + " term=" + s.getTerm() + " commit=" + s.getCommitIndex() + " last=" + s.getLastLogIndex()
                + " leader=" + leaderText;
    }

    private static boolean removed(NodeStatusResponse s, NodeStatusResponse leader) {
        if (s.getSelf().isEmpty() || members(s.getConfiguration()).isEmpty()) {
            return false; // never a member: it waits to be added
        }
        ConfigurationEntry reference = leader != null ? leader.getConfiguration() : s.getConfiguration();
        return !members(reference).contains(s.getSelf());
    }

    private static Set<String> members(ConfigurationEntry c) {
        Set<String> all = new HashSet<>(c.getPeersList());
        all.addAll(c.getLearnersList());
        all.addAll(c.getOldPeersList());
        all.addAll(c.getOldLearnersList());
        return all;
    }
}

package io.wheelraft.core.consensus;

import io.wheelraft.core.PeerId;
import io.wheelraft.core.RaftError;
import io.wheelraft.core.Status;
import io.wheelraft.proto.EntryType;
import io.wheelraft.proto.LogEntry;

import java.util.ArrayList;
import java.util.List;

/**
 * The consensus rules of witness replicas (see docs/divergence.md, "Witnesses"). A witness is a
 * voter that stores entry headers only (index, term, type; configuration entries in full, data
 * payloads empty): it votes by its (last index, last term) like any voter and acknowledges
 * appends, so it counts towards elections and commitment, but it never campaigns, never leads,
 * is never a leadership transfer's target and serves no reads. Voters refuse its (pre-)vote
 * requests, and leaders give it no failover turn and strip the payloads they send it.
 *
 * <p>A node is a witness when its options say so ({@link RaftConfig#witness()}) or the
 * membership marks it as one. The two must agree: a witness node listed as a data member, or a
 * data node marked as a witness, stops ({@link RoleMismatch}) instead of serving data it does
 * not hold or hiding data it does. Stateless; used on the node's Raft lane.
 */
public final class WitnessRules {

    private WitnessRules() {
    }

    /**
     * A node's options and the membership disagree about whether it is a witness. The node stops
     * (role ERROR) with this message: it can be fixed only by restarting it with the right
     * options or changing the membership.
     */
    public static final class RoleMismatch extends IllegalStateException {
        public RoleMismatch(String message) {
            super(message);
        }
    }

    /** Is this node a witness (by its options or by the membership)? Such a node never campaigns. */
    static boolean neverLeads(RaftConfig config, Membership m) {
        return config.witness() || m.isWitness(config.self());
    }

    /**
     * Why {@code self}, run as a witness ({@code witnessNode}) or as a data node, may not serve in
     * membership {@code m}, or null if it may: a witness must be marked as one wherever it is a
     * member, and a data node must not be marked. A node that is no member (yet) is fine.
     */
    public static String roleError(boolean witnessNode, PeerId self, Membership m) {
        boolean member = m.allMembers().contains(self);
        if (witnessNode && member && !m.isWitness(self)) {
            return self + " runs as a witness (it holds no data) but the configuration " + describe(m)
                    + " lists it as a data member; restart it as a data node on an empty data directory, or remove it "
                    + "and add it back as a witness";
        }
        if (!witnessNode && m.isWitness(self)) {
            return self + " runs as a data node but the configuration " + describe(m) + " marks it as a witness; "
                    + "restart it as a witness, or remove it and add it back as a data member";
        }
        return null;
    }

    /** Returns {@code m} after checking this node may serve in it; throws {@link RoleMismatch} if not. */
    static Membership checkRole(RaftConfig config, Membership m) {
        String error = roleError(config.witness(), config.self(), m);
        if (error != null) {
            throw new RoleMismatch(error);
        }
        return m;
    }

    private static String describe(Membership m) {
        return m.isJoint() ? m.current() + " (joint with " + m.old() + ")" : m.current().toString();
    }

    /**
     * Why a change from {@code current} to {@code target} is refused because a member stays but
     * switches between data member and witness, or null. A witness holds no data, so it cannot
     * become a data member in place; a data member made a witness would stop (its node runs as
     * a data node). Either must be removed and added back.
     */
    static String roleSwitchRefusal(io.wheelraft.core.Configuration current, io.wheelraft.core.Configuration target) {
        for (PeerId p : target.witnesses()) {
            if (current.containsAnywhere(p) && !current.isWitness(p)) {
                return p + " is a data member and cannot become a witness in place; remove it, then add it as a witness";
            }
        }
        for (PeerId p : current.witnesses()) {
            if (target.containsAnywhere(p) && !target.isWitness(p)) {
                return p + " is a witness (it holds no data) and cannot become a data member in place; remove it, then add it back";
            }
        }
        return null;
    }

    /** Why a vote or pre-vote from {@code candidate} is refused because it is a witness, or null. */
    static String voteRefusal(PeerId candidate, Membership m) {
        return m.isWitness(candidate) ? candidate + " is a witness and may not lead" : null;
    }

    /** The answer to a leadership transfer to witness {@code target}. */
    static Status transferRefused(PeerId target) {
        return Status.error(RaftError.INVALID_ARGUMENT,
                "%s is a witness: it holds no data and never leads; transfer leadership to a data member", target);
    }

    /**
     * What a leader sends to {@code peer}: headers only when it is a witness (data payloads
     * emptied: it would only throw them away, and they cost the network and its disk), else the
     * entries as they are.
     */
    static List<LogEntry> forPeer(boolean witness, List<LogEntry> entries) {
        return witness ? headersOnly(entries) : entries;
    }

    /** What this node stores from a leader's append: headers only on a witness (in case a leader sent payloads). */
    static List<LogEntry> toStore(RaftConfig config, List<LogEntry> entries) {
        return config.witness() ? headersOnly(entries) : entries;
    }

    /** {@code entries} with the payloads of data entries emptied; index, term, type and configurations kept. */
    public static List<LogEntry> headersOnly(List<LogEntry> entries) {
        List<LogEntry> out = null;
        for (int i = 0; i < entries.size(); i++) {
            LogEntry e = entries.get(i);
            boolean strip = e.getType() == EntryType.ENTRY_TYPE_DATA && !e.getData().isEmpty();
            if (strip && out == null) {
                out = new ArrayList<>(entries.subList(0, i));
            }
            if (out != null) {
                out.add(strip ? e.toBuilder().clearData().build() : e);
            }
        }
        return out == null ? entries : out;
    }
}

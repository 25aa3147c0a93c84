package io.wheelraft.core.consensus;

import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.PeerId;

import java.util.Comparator;
import java.util.OptionalInt;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

/**
 * The rules of election priorities (in the manner of SOFAJRaft's {@code electionPriority} and
 * Ratis' peer priorities): which priority is in effect for a member, who never leads, the order
 * in which survivors campaign, and the wait that lets a preferred node go first without keeping
 * anyone from campaigning when it is gone. Priorities only delay a campaign or hand leadership
 * over; they never change who votes, how votes are counted, or what is committed. Stateless;
 * called on the node's Raft lane.
 *
 * <p>A member's effective priority: the configuration's explicit value when it sets one
 * ({@code Node.setPriority}); otherwise the value the member advertises from its own options
 * ({@link NodeOptions#electionPriority()}, carried in its AppendEntries answers to the leader);
 * otherwise the default, {@link NodeOptions#DEFAULT_ELECTION_PRIORITY}. A witness counts as 0.
 * Priority 0 never campaigns, never leads and is never a transfer target.
 */
final class ElectionPriority {

    /** An advertised priority not heard (yet): the default applies. */
    static final int UNKNOWN = -1;

    private ElectionPriority() {
    }

    /**
     * The priority in effect for {@code peer} under {@code m}: explicit in the configuration,
     * else {@code advertised} ({@link #UNKNOWN}: none heard), else the default; 0 for a witness.
     */
    static int effective(Membership m, PeerId peer, int advertised) {
        if (m.isWitness(peer)) {
            return 0;
        }
        OptionalInt explicit = explicit(m, peer);
        if (explicit.isPresent()) {
            return explicit.getAsInt();
        }
        return advertised >= 0 ? advertised : NodeOptions.DEFAULT_ELECTION_PRIORITY;
    }

    /** This node's own effective priority: what its options say, unless the configuration says otherwise. */
    static int own(Membership m, RaftConfig config) {
        return effective(m, config.self(), config.electionPriority());
    }

    /** The priority the configuration sets for {@code peer} (the new half's first while joint), if any. */
    static OptionalInt explicit(Membership m, PeerId peer) {
        OptionalInt p = m.current().priority(peer);
        if (p.isEmpty() && m.old() != null) {
            p = m.old().priority(peer);
        }
        return p;
    }

    /**
     * Does the configuration itself rule {@code candidate} out as a leader (explicit priority 0,
     * or a witness)? A voter refuses such a candidate: a node that has not yet seen the
     * configuration saying so may still ask. What it advertises only the node itself and the
     * leader know, and the node keeps to it by never asking.
     */
    static boolean configuredNeverLeads(Membership m, PeerId candidate) {
        return m.isWitness(candidate) || explicit(m, candidate).orElse(1) == 0;
    }

    /**
     * The order in which the leader ranks voters for failover turns and hand-over: higher
     * priority first, then more of the log (match index), then lower id. The caller leaves out
     * those with priority 0: they get no turn.
     */
    static Comparator<PeerId> preferredFirst(ToIntFunction<PeerId> priority, ToLongFunction<PeerId> match) {
        return Comparator.comparingInt((PeerId p) -> -priority.applyAsInt(p))
                .thenComparingLong(p -> -match.applyAsLong(p))
                .thenComparing(p -> p);
    }

    /**
     * How many voters, other than this node and {@code lostLeader}, this node knows to be
     * preferred to it: their explicit priority (or, without one, the default) is higher than
     * {@code own}. A follower without a failover turn from its leader waits one failover slot per
     * such voter before campaigning on a silent leader, so a preferred survivor goes first; and
     * since it is only a wait, it still campaigns when they are gone (a decaying gap: each voter
     * ahead costs one slot, not a veto). Advertised priorities of others are only the leader's
     * to know: until a leader ranks it, a follower assumes the default for members the
     * configuration names no priority for.
     */
    static int knownPreferred(Membership m, PeerId self, PeerId lostLeader, int own) {
        int n = 0;
        for (PeerId p : m.voters()) {
            if (!p.equals(self) && !p.equals(lostLeader) && effective(m, p, UNKNOWN) > own) {
                n++;
            }
        }
        return n;
    }

    /**
     * This node's place (1, 2, ...) among the voters other than {@code lostLeader} that may lead,
     * when no leader told it a turn: by known priority (as in {@link #knownPreferred}), then id.
     */
    static int place(Membership m, PeerId self, PeerId lostLeader, int own) {
        int before = 0;
        for (PeerId p : m.voters()) {
            if (p.equals(self) || p.equals(lostLeader)) {
                continue;
            }
            int theirs = effective(m, p, UNKNOWN);
            if (theirs > own || (theirs == own && theirs > 0 && p.compareTo(self) < 0)) {
                before++;
            }
        }
        return before + 1;
    }
}

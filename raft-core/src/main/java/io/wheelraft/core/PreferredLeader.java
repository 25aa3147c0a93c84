package io.wheelraft.core;

import java.util.List;

/**
 * Which of equally ranked voters a group prefers as its leader: one picked by a hash of the group
 * id, so the groups of a process spread their leaders evenly over the processes. The first
 * election of a fresh group starts on this voter ({@link NodeOptions#fastFirstElection}); a
 * service hosting many groups can give it a higher {@link NodeOptions#electionPriority} too, and
 * leadership then returns to it whenever it is up and caught up, so leaders stay spread after
 * failovers and restarts.
 */
public final class PreferredLeader {

    private PreferredLeader() {
    }

    /**
     * @param groupId the group
     * @param voters  the candidates, sorted (every member must pass the same list to agree)
     * @return the one of {@code voters} the group prefers
     */
    public static PeerId of(String groupId, List<PeerId> voters) {
        if (voters.isEmpty()) {
            throw new IllegalArgumentException("no voters to prefer among for group '" + groupId + "'");
        }
        int h = groupId.hashCode() * 0x9E3779B9; // spreads ids that differ only a little ("0", "1", ...)
        h ^= h >>> 16;
        return voters.get(Math.floorMod(h, voters.size()));
    }
}

package io.wheelraft.example;

import io.wheelraft.core.PeerId;

import java.util.List;

/**
 * Checks {@code server --witnesses} against {@code --peers} and {@code --self}: every node of an
 * initial configuration is given the same list, naming the witnesses among the peers; a node
 * joining later as a witness names itself there without being in {@code --peers}. Anything else
 * is one usage line (exit 2) naming the address and what to do. Stateless.
 */
final class WitnessList {

    private WitnessList() {
    }

    /**
     * @param text the option's value, or null when it was not given (no witnesses)
     * @return the witnesses, in the order given
     * @throws CliException (usage) naming the witness that is not among the peers, or saying that
     *                      no member would hold data
     */
    static List<PeerId> parse(String text, PeerId self, List<PeerId> peers) {
        if (text == null) {
            return List.of();
        }
        List<PeerId> witnesses = Addresses.parseList("--witnesses", text);
        for (PeerId w : witnesses) {
            if (peers.contains(w)) {
                continue;
            }
            if (w.equals(self)) {
                continue; // a witness that joins later (admin add-witness): not a member yet
            }
            throw CliException.usage("--witnesses names " + w + ", which is not among --peers " + Addresses.endpoints(peers)
                    + "; list every witness in --peers too, spelt the same way (only a node joining later as a witness names"
                    + " itself in --witnesses without being in --peers)");
        }
        if (witnesses.containsAll(peers)) {
            throw CliException.usage("--witnesses names every member of --peers; a witness holds no data, so at least one member"
                    + " must not be a witness");
        }
        return List.copyOf(witnesses);
    }
}

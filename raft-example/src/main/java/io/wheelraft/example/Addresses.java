package io.wheelraft.example;

import io.wheelraft.core.PeerId;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * Parses the command line's {@code HOST:PORT} addresses and comma-separated lists of them, turning
 * malformed input into a {@link CliException#usage usage error} that names the bad value. Stateless.
 */
public final class Addresses {

    private Addresses() {
    }

    /** One {@code HOST:PORT} (no peer index: the counter runs one node per process). */
    public static PeerId parse(String option, String text) {
        if (text == null || text.isBlank()) {
            throw CliException.usage(option + " is empty; expected HOST:PORT");
        }
        String s = text.trim();
        if (s.split(":", -1).length != 2) {
            throw CliException.usage(option + " '" + text + "' is not of the form HOST:PORT");
        }
        try {
            return PeerId.parse(s);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(option + ": " + e.getMessage());
        }
    }

    /** A non-empty list {@code HOST:PORT,HOST:PORT,...} in the order given, without repeats. */
    public static List<PeerId> parseList(String option, String text) {
        if (text == null || text.isBlank()) {
            throw CliException.usage(option + " is empty; expected HOST:PORT,HOST:PORT,...");
        }
        LinkedHashSet<PeerId> result = new LinkedHashSet<>();
        for (String item : text.split(",", -1)) {
            if (item.isBlank()) {
                throw CliException.usage(option + " '" + text + "' has an empty entry");
            }
            PeerId p = parse(option, item);
            if (!result.add(p)) {
                throw CliException.usage(option + " '" + text + "' names " + p + " twice");
            }
        }
        return new ArrayList<>(result);
    }

    /** The endpoints ({@code host:port}) of a list. */
    public static List<String> endpoints(List<PeerId> peers) {
        return peers.stream().map(PeerId::endpoint).toList();
    }
}

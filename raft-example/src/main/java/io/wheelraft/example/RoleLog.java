package io.wheelraft.example;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a counter server's log for the role changes its role watcher writes
 * ({@code role change at INSTANT: ROLE term=T leader=L (was ROLE term=T)}), for what the chaos runner
 * cannot ask a node while it is cut off: when it stopped leading. Stateless.
 */
final class RoleLog {

    private static final Pattern CHANGE = Pattern.compile("role change at (\\S+): (\\S+) term=(\\d+) .*\\(was (\\S+) term=(\\d+)\\)");

    private RoleLog() {
    }

    /**
     * The first moment at or after {@code since} at which the log says the node stopped leading in
     * {@code term}; empty if it does not say so (or the log cannot be read).
     */
    static Optional<Instant> stoppedLeading(Path log, long term, Instant since) {
        try (BufferedReader r = Files.newBufferedReader(log, StandardCharsets.ISO_8859_1)) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                Matcher m = CHANGE.matcher(line);
                if (m.find() && m.group(4).equals("leader") && Long.parseLong(m.group(5)) == term && !m.group(2).equals("leader")) {
                    Instant at = Instant.parse(m.group(1));
                    if (!at.isBefore(since)) {
                        return Optional.of(at);
                    }
                }
            }
        } catch (IOException | DateTimeParseException | NumberFormatException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }
}

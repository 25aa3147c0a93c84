package io.wheelraft.example;

import io.wheelraft.proto.GroupsSummaryResponse;

import java.util.ArrayList;
import java.util.List;

/**
 * The lines of {@code status --peers LIST --groups}, one per address in the order of
 * {@code --peers}: {@code ADDRESS groups=N leaders=L quiet=Q} for a process that answered (N
 * replicas hosted, L of them leading, Q quiescent), {@code ADDRESS down} for one that did not.
 * Stateless.
 */
final class GroupsStatusLines {

    private GroupsStatusLines() {
    }

    /** What one address answered, or null when it did not. */
    record Answer(String endpoint, GroupsSummaryResponse summary) {
        boolean answered() {
            return summary != null;
        }
    }

    static List<String> lines(List<Answer> answers) {
        List<String> out = new ArrayList<>(answers.size());
        for (Answer a : answers) {
            out.add(a.answered()
                    ? a.endpoint() + " groups=" + a.summary().getGroups() + " leaders=" + a.summary().getLeaders() + " quiet=" + a.summary().getQuiet()
                    : a.endpoint() + " down");
        }
        return out;
    }
}

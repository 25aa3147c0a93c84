package io.wheelraft.example;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code bench} says when a hypervisor took a share of the host's CPU during its window. */
class BenchStealNoteTest {

    @Test
    void aContendedWindowGetsOneNoteWithTheShare() {
        String note = BenchCommand.stealNote(21.6);
        assertTrue(note.startsWith(Main.NAME + ": note: the hypervisor took 22 % of this host's CPU time"), note);
        assertTrue(note.contains("measure again"), note);
    }

    @Test
    void belowTheThresholdOrUnknownNothingIsSaid() {
        assertNull(BenchCommand.stealNote(BenchCommand.STEAL_NOTE_PERCENT - 0.1));
        assertNull(BenchCommand.stealNote(Double.NaN));
        assertTrue(BenchCommand.stealNote(BenchCommand.STEAL_NOTE_PERCENT) != null);
    }
}

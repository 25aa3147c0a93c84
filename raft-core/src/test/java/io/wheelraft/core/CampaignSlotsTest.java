package io.wheelraft.core;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CampaignSlotsTest {

    private static final long HOLD_LIMIT_MS = 1_000;

    private final List<String> granted = new ArrayList<>();

    private Runnable grant(String who) {
        return () -> granted.add(who);
    }

    @Test
    void aFullProcessPutsTheNextGroupInLineAndHandsItTheFirstSlotGivenBack() {
        CampaignSlots slots = new CampaignSlots(2, HOLD_LIMIT_MS);
        assertTrue(slots.tryTake("a", 0));
        assertTrue(slots.tryTake("b", 0));
        assertFalse(slots.tryTake("c", 0));
        slots.awaitSlot("c", 0, grant("c"));
        assertEquals(List.of(), granted);
        assertEquals(1, slots.inLine());

        slots.release("a");

        assertEquals(List.of("c"), granted);
        assertEquals(2, slots.inUse());
        assertEquals(0, slots.inLine());
        assertTrue(slots.tryTake("c", 5), "c holds the slot it was granted");
        assertEquals(2, slots.peakInUse());
        assertEquals(1, slots.queued());
    }

    @Test
    void theLineIsServedInOrderAndANewcomerDoesNotJumpIt() {
        CampaignSlots slots = new CampaignSlots(1, HOLD_LIMIT_MS);
        assertTrue(slots.tryTake("a", 0));
        slots.awaitSlot("b", 0, grant("b"));
        slots.awaitSlot("c", 0, grant("c"));
        slots.awaitSlot("b", 0, grant("b again")); // already in line: left as it is

        slots.release("a");
        assertFalse(slots.tryTake("d", 1), "c waits ahead of a newcomer");
        slots.release("b");
        slots.release("c");

        assertEquals(List.of("b", "c"), granted);
        assertTrue(slots.tryTake("d", 2));
    }

    @Test
    void waitingWithASlotFreeIsGrantedAtOnce() {
        CampaignSlots slots = new CampaignSlots(1, HOLD_LIMIT_MS);
        slots.awaitSlot("a", 0, grant("a"));
        assertEquals(List.of("a"), granted);
        assertEquals(1, slots.inUse());
    }

    @Test
    void aSlotHeldPastTheLimitIsTakenBackAndGoesToTheLine() {
        CampaignSlots slots = new CampaignSlots(1, HOLD_LIMIT_MS);
        assertTrue(slots.tryTake("stopped mid-round", 0));
        slots.awaitSlot("b", 10, grant("b"));
        assertFalse(slots.tryTake("c", HOLD_LIMIT_MS - 1));
        assertEquals(List.of(), granted);

        assertFalse(slots.tryTake("c", HOLD_LIMIT_MS), "the line goes first");

        assertEquals(List.of("b"), granted);
        slots.release("stopped mid-round"); // late: it holds nothing any more
        assertEquals(1, slots.inUse());
    }

    @Test
    void aStoppedGroupLeavesTheLineAndGivesBackItsSlot() {
        CampaignSlots slots = new CampaignSlots(1, HOLD_LIMIT_MS);
        assertTrue(slots.tryTake("a", 0));
        slots.awaitSlot("b", 0, grant("b"));
        slots.awaitSlot("c", 0, grant("c"));

        slots.forget("b");
        slots.forget("a");

        assertEquals(List.of("c"), granted);
        assertEquals(0, slots.inLine());
    }

    @Test
    void releasingWithoutASlotChangesNothing() {
        CampaignSlots slots = new CampaignSlots(1, HOLD_LIMIT_MS);
        assertTrue(slots.tryTake("a", 0));
        slots.awaitSlot("b", 0, grant("b"));
        slots.release("b");
        assertEquals(List.of(), granted);
        assertEquals(1, slots.inLine());
    }

    @Test
    void unlimitedSlotsNeverMakeAnyoneWait() {
        CampaignSlots slots = CampaignSlots.unlimited();
        for (int i = 0; i < 10_000; i++) {
            assertTrue(slots.tryTake("g" + i, 0));
        }
        slots.awaitSlot("late", 0, grant("late"));
        assertEquals(List.of("late"), granted);
        assertFalse(slots.bounded());
    }

    @Test
    void aBoundBelowOneIsRefusedWithTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new CampaignSlots(0, HOLD_LIMIT_MS));
        assertTrue(e.getMessage().contains("was 0"), e.getMessage());
    }
}

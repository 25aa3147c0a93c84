package io.wheelraft.rpc;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoopWriteTest {

    private final List<String> written = new ArrayList<>();
    private final List<String> pending = new ArrayList<>();

    /** The stream's write: takes everything pending, as a real write takes its queued items. */
    private void write() {
        written.add(String.join(",", pending));
        pending.clear();
    }

    @Test
    void withoutALoopTheRequestingThreadWrites() {
        LoopWrite w = new LoopWrite(null, this::write);
        pending.add("a");
        w.request();
        assertEquals(List.of("a"), written);
    }

    @Test
    void requestsWhileATaskIsQueuedAreTakenAlongByIt() {
        ManualLoop loop = new ManualLoop();
        LoopWrite w = new LoopWrite(loop, this::write);
        pending.add("g1");
        w.request();
        pending.add("g2");
        w.request();
        assertTrue(written.isEmpty(), "nothing written on the requesting thread");
        assertEquals(1, loop.tasks.size(), "one task for both");

        loop.runAll();
        assertEquals(List.of("g1,g2"), written);

        pending.add("g3");
        w.request();
        assertEquals(1, loop.tasks.size(), "a request after the task ran posts a new one");
        loop.runAll();
        assertEquals(List.of("g1,g2", "g3"), written);
    }

    @Test
    void aRequestDuringTheTasksWriteGetsAWriteOfItsOwn() {
        ManualLoop loop = new ManualLoop();
        LoopWrite[] w = new LoopWrite[1];
        // The write itself queues one more item and asks again, as an answer decided while the loop
        // writes would: the task has cleared its flag, so a new task is posted and the item is not stranded.
        w[0] = new LoopWrite(loop, () -> {
            write();
            if (written.size() == 1) {
                pending.add("late");
                w[0].request();
            }
        });
        pending.add("first");
        w[0].request();
        loop.runAll();
        assertEquals(1, loop.tasks.size());
        loop.runAll();
        assertEquals(List.of("first", "late"), written);
    }

    @Test
    void aLoopThatRefusesLeavesEveryLaterWriteToTheRequestingThread() {
        ManualLoop loop = new ManualLoop();
        loop.refusing = true;
        LoopWrite w = new LoopWrite(loop, this::write);
        pending.add("a");
        w.request();
        assertEquals(List.of("a"), written, "written at once, as without a loop");

        loop.refusing = false;
        pending.add("b");
        w.request();
        assertEquals(List.of("a", "b"), written);
        assertTrue(loop.tasks.isEmpty(), "the refusing loop is not asked again");
    }

    @Test
    void aLoopGivenLaterTakesOverTheWrites() {
        ManualLoop loop = new ManualLoop();
        LoopWrite w = new LoopWrite(null, this::write);
        w.useLoop(loop);
        pending.add("a");
        w.request();
        assertTrue(written.isEmpty());
        loop.runAll();
        assertEquals(List.of("a"), written);
    }
}

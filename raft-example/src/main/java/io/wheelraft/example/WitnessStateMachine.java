package io.wheelraft.example;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.StateMachineAdapter;
import io.wheelraft.core.Status;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;

/**
 * What a witness node is given where NodeOptions asks for a state machine: it holds nothing.
 * The core never applies data on a witness (it stores entry headers only) and never lets one
 * lead, so no data replica ever installs a snapshot from it; whatever reaches this class is
 * passed over. A snapshot writes no files (the core keeps its index, term and configuration),
 * and loading one restores nothing. Stateless; called on the node's apply thread.
 */
final class WitnessStateMachine extends StateMachineAdapter {

    @Override
    public void onApply(Iterator it) {
        while (it.hasNext()) {
            it.next();
        }
    }

    @Override
    public void onSnapshotSave(SnapshotWriter writer, Closure done) {
        done.run(Status.ok());
    }

    @Override
    public boolean onSnapshotLoad(SnapshotReader reader) {
        return true;
    }
}

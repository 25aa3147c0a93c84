package io.wheelraft.core.node;

import io.wheelraft.core.Closure;
import io.wheelraft.core.Configuration;
import io.wheelraft.core.Iterator;
import io.wheelraft.core.NodeOptions;
import io.wheelraft.core.StateMachine;
import io.wheelraft.core.Status;
import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;

/**
 * What a witness node applies to: data entries are passed over (a witness stores no payloads, so
 * there is nothing to apply), snapshots are metadata only (the node writes the last included
 * index, term and configuration; no state file), and loading one reads nothing. Configuration
 * commits, errors and shutdown still reach the user's state machine when one was given
 * ({@link NodeOptions#stateMachine()} is optional for a witness). Called on the apply lane only,
 * like any state machine.
 */
final class WitnessStateMachine implements StateMachine {

    /** The user's state machine, told of configurations, errors and shutdown; null if none was given. */
    private final StateMachine observer;

    private WitnessStateMachine(StateMachine observer) {
        this.observer = observer;
    }

    /** The state machine a node with {@code options} applies to: the user's, or for a witness this one around it. */
    static StateMachine forNode(NodeOptions options) {
        return options.witness() ? new WitnessStateMachine(options.stateMachine()) : options.stateMachine();
    }

    @Override
    public void onApply(Iterator iterator) {
        while (iterator.hasNext()) {
            iterator.next(); // headers only: nothing to apply (a witness never leads, so no caller waits)
        }
    }

    @Override
    public void onSnapshotSave(SnapshotWriter writer, Closure done) {
        done.run(Status.ok()); // no state file: the snapshot is its metadata
    }

    @Override
    public boolean onSnapshotLoad(SnapshotReader reader) {
        return true; // nothing to load: whatever files came with it are not read
    }

    @Override
    public void onLeaderStart(long term) {
        // a witness never leads
    }

    @Override
    public void onLeaderStop(Status status) {
        // a witness never leads
    }

    @Override
    public void onConfigurationCommitted(Configuration configuration) {
        if (observer != null) {
            observer.onConfigurationCommitted(configuration);
        }
    }

    @Override
    public void onError(Status error) {
        if (observer != null) {
            observer.onError(error);
        }
    }

    @Override
    public void onShutdown() {
        if (observer != null) {
            observer.onShutdown();
        }
    }
}

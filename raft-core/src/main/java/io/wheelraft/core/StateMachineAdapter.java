package io.wheelraft.core;

import io.wheelraft.core.spi.SnapshotReader;
import io.wheelraft.core.spi.SnapshotWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A {@link StateMachine} whose optional callbacks do nothing (snapshots are refused), so users override only what they need. */
public abstract class StateMachineAdapter implements StateMachine {

    private static final Logger LOG = LoggerFactory.getLogger(StateMachineAdapter.class);

    @Override
    public void onSnapshotSave(SnapshotWriter writer, Closure done) {
        done.run(Status.error(RaftError.STATE_MACHINE_ERROR, "%s does not implement onSnapshotSave", getClass().getName()));
    }

    @Override
    public boolean onSnapshotLoad(SnapshotReader reader) {
        LOG.error("{} does not implement onSnapshotLoad; refusing snapshot", getClass().getName());
        return false;
    }

    @Override
    public void onLeaderStart(long term) {
    }

    @Override
    public void onLeaderStop(Status status) {
    }

    @Override
    public void onConfigurationCommitted(Configuration configuration) {
    }

    @Override
    public void onError(Status error) {
        LOG.error("state machine {} stopped by error: {}", getClass().getName(), error);
    }

    @Override
    public void onShutdown() {
    }
}

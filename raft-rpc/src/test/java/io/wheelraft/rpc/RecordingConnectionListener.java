package io.wheelraft.rpc;

import io.wheelraft.core.spi.ConnectionListener;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What a transport's listeners were told, in order: {@link #events} "lost host:port", "silent
 * host:port", "restored host:port"; {@link #withGone} the same with "gone host:port" among them.
 */
final class RecordingConnectionListener implements ConnectionListener {
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<String> withGone = new CopyOnWriteArrayList<>();

    private void add(String event) {
        events.add(event);
        withGone.add(event);
    }

    @Override
    public void onConnectionLost(String endpoint) {
        add("lost " + endpoint);
    }

    @Override
    public void onPeerSilent(String endpoint) {
        add("silent " + endpoint);
    }

    @Override
    public void onPeerGone(String endpoint) {
        withGone.add("gone " + endpoint);
    }

    @Override
    public void onConnectionRestored(String endpoint) {
        add("restored " + endpoint);
    }
}

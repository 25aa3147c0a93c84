package io.wheelraft.rpc;

import io.wheelraft.core.spi.ConnectionListener;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** What a transport's listeners were told, in order: "lost host:port", "silent host:port", "restored host:port", "gone host:port". */
final class RecordingConnectionListener implements ConnectionListener {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override
    public void onConnectionLost(String endpoint) {
        events.add("lost " + endpoint);
    }

    @Override
    public void onPeerSilent(String endpoint) {
        events.add("silent " + endpoint);
    }

    @Override
    public void onPeerGone(String endpoint) {
        events.add("gone " + endpoint);
    }

    @Override
    public void onConnectionRestored(String endpoint) {
        events.add("restored " + endpoint);
    }
}

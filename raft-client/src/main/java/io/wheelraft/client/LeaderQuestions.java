package io.wheelraft.client;

import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.wheelraft.client.proto.LeaderReply;
import io.wheelraft.client.proto.LeaderRequest;
import io.wheelraft.client.proto.RaftClientServiceGrpc;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * "Who leads?" asked of a group's members, at most one question per member outstanding, each held
 * by the member until it knows a leader the asker can use ({@link LeaderRequest#getWaitMs()}, see
 * {@code HeldLeaderAnswer}). The asker may call {@link #ask} as often as it likes (a client does
 * at every tick while calls wait for a leader): a member already asked is not asked again until
 * it answers, and one that failed to answer is left alone for {@link #AFTER_FAILURE_MS}. A member
 * that does not hold answers (it answers at once) is asked again at the asker's pace, as before
 * answers could be held. Thread-safe.
 */
final class LeaderQuestions {

    /** How long a member holds a question; the call's deadline adds {@link #ANSWER_MARGIN_MS}. */
    static final long WAIT_MS = 1_000;
    static final long ANSWER_MARGIN_MS = 300;
    /** After a failed question (the member is down or too slow), the pause before asking it again. */
    static final long AFTER_FAILURE_MS = 100;

    private final String groupId;
    private final Function<String, ManagedChannel> channels;
    /** Members with a question outstanding. */
    private final Set<String> asked = ConcurrentHashMap.newKeySet();
    /** Members whose last question failed, with when. */
    private final Map<String, Long> failedAt = new ConcurrentHashMap<>();

    LeaderQuestions(String groupId, Function<String, ManagedChannel> channels) {
        this.groupId = groupId;
        this.channels = channels;
    }

    /**
     * Asks each of {@code members} not asked already who leads; a member answers once it knows a
     * leader outside {@code notLeaders}, or when its wait ends. Each answer goes to {@code onAnswer}
     * (on a gRPC thread).
     */
    void ask(Collection<String> members, Collection<String> notLeaders, BiConsumer<String, LeaderReply> onAnswer) {
        long now = System.nanoTime();
        LeaderRequest request = null; // the same for every member; built once one is to be asked
        for (String member : members) {
            Long failed = failedAt.get(member);
            if (failed != null && now - failed < TimeUnit.MILLISECONDS.toNanos(AFTER_FAILURE_MS)) {
                continue;
            }
            if (!asked.add(member)) {
                continue; // its answer is still to come
            }
            if (request == null) {
                request = LeaderRequest.newBuilder().setGroupId(groupId).setWaitMs((int) WAIT_MS).addAllNotLeaders(notLeaders).build();
            }
            try {
                RaftClientServiceGrpc.newStub(channels.apply(member)).withDeadlineAfter(WAIT_MS + ANSWER_MARGIN_MS, TimeUnit.MILLISECONDS)
                        .leader(request, new StreamObserver<>() {
                            @Override
                            public void onNext(LeaderReply reply) {
                                asked.remove(member);
                                failedAt.remove(member);
                                onAnswer.accept(member, reply);
                            }

                            @Override
                            public void onError(Throwable t) {
                                failed(member);
                            }

                            @Override
                            public void onCompleted() {
                            }
                        });
            } catch (RuntimeException e) {
                failed(member);
            }
        }
    }

    /** {@code member} did not answer: another may; this one is asked again after the pause. */
    private void failed(String member) {
        failedAt.put(member, System.nanoTime());
        asked.remove(member);
    }
}

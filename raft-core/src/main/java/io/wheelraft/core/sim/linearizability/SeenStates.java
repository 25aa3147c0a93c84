package io.wheelraft.core.sim.linearizability;

import java.util.Arrays;

/**
 * The checker's memo of (set of linearized operations, model state, tag) keys already explored: a
 * pair seen once leads to the same subproblem, so it is never searched twice.
 *
 * <p>Keys are exact (no false positives from hash collisions): the bit set is stored compressed,
 * as the number of leading all-ones words plus the words after them up to the last non-zero one.
 * Operations are numbered in invocation order, so the linearized set is nearly always a full
 * prefix plus a short ragged tail, and a key costs a few words instead of n/64.
 *
 * <p>Single-threaded: owned by one search.
 */
final class SeenStates {

    private static final class Key {
        final long hash;
        final int fullWords;
        final long[] tail;
        final Object state;
        final int tag;
        Key next;

        Key(long hash, int fullWords, long[] tail, Object state, int tag, Key next) {
            this.hash = hash;
            this.fullWords = fullWords;
            this.tail = tail;
            this.state = state;
            this.tag = tag;
            this.next = next;
        }
    }

    private Key[] table = new Key[1 << 10];
    private int size;

    int size() {
        return size;
    }

    /**
     * Adds the pair unless already present.
     *
     * @param setHash a hash of the bit set (the caller keeps it incrementally)
     * @param tag     a small extra part of the key (the search's chain length in bounded passes)
     * @return true if the pair is new
     */
    boolean add(long setHash, long[] bits, Object state, int tag) {
        long hash = mix(setHash ^ (state.hashCode() * 0x9E3779B97F4A7C15L) ^ ((long) tag << 48));
        int full = 0;
        while (full < bits.length && bits[full] == -1L) {
            full++;
        }
        int end = bits.length;
        while (end > full && bits[end - 1] == 0L) {
            end--;
        }
        int slot = (int) hash & (table.length - 1);
        for (Key k = table[slot]; k != null; k = k.next) {
            if (k.hash == hash && k.fullWords == full && Arrays.equals(k.tail, 0, k.tail.length, bits, full, end)
                    && k.tag == tag && k.state.equals(state)) {
                return false;
            }
        }
        table[slot] = new Key(hash, full, Arrays.copyOfRange(bits, full, end), state, tag, table[slot]);
        if (++size > table.length - (table.length >> 2)) {
            grow();
        }
        return true;
    }

    private void grow() {
        Key[] bigger = new Key[table.length << 1];
        for (Key head : table) {
            for (Key k = head; k != null; ) {
                Key next = k.next;
                int slot = (int) k.hash & (bigger.length - 1);
                k.next = bigger[slot];
                bigger[slot] = k;
                k = next;
            }
        }
        table = bigger;
    }

    /** A 64-bit finaliser (from SplitMix64) so that nearby hashes spread over the table. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}

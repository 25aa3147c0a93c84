/**
 * Internal, not part of the public API (it may change in any release): the Raft algorithm as a
 * pure state machine. It uses no thread, clock, randomness of its own, I/O or node shell;
 * raft-core's {@code ConsensusArchitectureTest} fails the build otherwise. Users import
 * {@code io.wheelraft.core} and {@code io.wheelraft.core.spi}.
 */
package io.wheelraft.core.consensus;

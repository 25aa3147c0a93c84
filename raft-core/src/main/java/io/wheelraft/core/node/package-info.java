/**
 * Internal, not part of the public API (it may change in any release): the node shell that
 * drives the Raft algorithm on its lanes, timers, storage and transport. Users start a node with
 * {@link io.wheelraft.core.RaftGroupService} on a {@link io.wheelraft.core.RaftRuntime} and talk
 * to it through {@link io.wheelraft.core.Node}; no public signature outside this package names
 * a type of it, and the other modules' {@code InternalPackagesTest} keep them from importing it.
 */
package io.wheelraft.core.node;

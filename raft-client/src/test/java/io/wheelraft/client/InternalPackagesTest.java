package io.wheelraft.client;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * raft-client, its tests included, uses raft-core only through its public API: never the Raft
 * algorithm ({@code io.wheelraft.core.consensus}) nor the node shell ({@code io.wheelraft.core.node}),
 * which may change at any time (docs/architecture.md, "Public API").
 */
class InternalPackagesTest {

    @Test
    void usesNoInternalPackageOfRaftCore() {
        JavaClasses classes = new ClassFileImporter()
                // the module's own output (surefire runs in the module's folder); scanning the class
                // path for a package would open every jar on it, RocksDB's and gRPC's included
                .importPaths(Path.of("target", "classes"), Path.of("target", "test-classes"));
        assertTrue(classes.size() > 10, "the module's classes were found, got " + classes.size());
        noClasses().should().dependOnClassesThat().resideInAnyPackage("io.wheelraft.core.consensus..", "io.wheelraft.core.node..")
                .as("raft-client uses no internal package of raft-core")
                .because("a user imports only io.wheelraft.core, its spi and the testing tools")
                .check(classes);
    }
}

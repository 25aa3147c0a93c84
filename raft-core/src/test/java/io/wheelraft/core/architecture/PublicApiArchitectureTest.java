package io.wheelraft.core.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.EvaluationResult;
import io.wheelraft.core.architecture.fixture.KeepsInternalsHidden;
import io.wheelraft.core.architecture.fixture.LeaksInternals;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A user of raft-core never has to import its internal packages (see {@link PublicApiRules}). */
class PublicApiArchitectureTest {

    private static final String FIXTURES = "io.wheelraft.core.architecture.fixture..";

    @Test
    void noPublicSignatureOfRaftCoreNamesAnInternalType() {
        JavaClasses core = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.wheelraft.core");
        assertTrue(core.size() > 50, "raft-core's classes were found, got " + core.size());
        PublicApiRules.exposesNoInternalTypes("io.wheelraft.core..").check(core);
    }

    @Test
    void theRuleFiresOnEachPublicSignatureThatNamesAnInternalType() {
        EvaluationResult result = PublicApiRules.exposesNoInternalTypes(FIXTURES)
                .evaluate(new ClassFileImporter().importClasses(LeaksInternals.class));
        // runOn's parameter and runtimes' generic return type; not the package-private method
        assertEquals(2, result.getFailureReport().getDetails().size(), result.getFailureReport().toString());
    }

    @Test
    void internalTypesBehindPackagePrivateMembersAreAllowed() {
        EvaluationResult result = PublicApiRules.exposesNoInternalTypes(FIXTURES)
                .evaluate(new ClassFileImporter().importClasses(KeepsInternalsHidden.class));
        assertFalse(result.hasViolation(), result.getFailureReport().toString());
    }
}

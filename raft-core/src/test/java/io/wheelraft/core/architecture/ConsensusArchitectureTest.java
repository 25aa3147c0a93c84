package io.wheelraft.core.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import io.wheelraft.core.architecture.fixture.PureStep;
import io.wheelraft.core.architecture.fixture.Violations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Raft algorithm in {@code io.wheelraft.core.consensus} stays a pure state machine (see
 * {@link ConsensusPurityRules} for what each rule forbids and allows), and each rule is shown to
 * fire on a class that breaks it.
 */
class ConsensusArchitectureTest {

    private static final String CONSENSUS = "io.wheelraft.core.consensus..";
    private static final String FIXTURES = "io.wheelraft.core.architecture.fixture..";

    @Test
    void consensusUsesNoThreadsClocksOwnRandomnessIoOrNodeShell() {
        JavaClasses core = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.wheelraft.core.consensus");
        assertTrue(core.size() > 10, "the consensus classes were found, got " + core.size());
        // One composite check, so a failure lists every broken rule, not only the first.
        CompositeArchRule.of(ConsensusPurityRules.all(CONSENSUS)).check(core);
    }

    static Stream<Arguments> violations() {
        return Stream.of(
                Arguments.of(Violations.StartsThread.class, ConsensusPurityRules.noThreads(FIXTURES)),
                Arguments.of(Violations.MakesExecutor.class, ConsensusPurityRules.noThreads(FIXTURES)),
                Arguments.of(Violations.TakesLock.class, ConsensusPurityRules.noThreads(FIXTURES)),
                Arguments.of(Violations.WaitsOnMonitor.class, ConsensusPurityRules.noThreads(FIXTURES)),
                Arguments.of(Violations.SynchronizedMethod.class, ConsensusPurityRules.noSynchronizedMethods(FIXTURES)),
                Arguments.of(Violations.ReadsWallClock.class, ConsensusPurityRules.noClocks(FIXTURES)),
                Arguments.of(Violations.ReadsNanoTime.class, ConsensusPurityRules.noClocks(FIXTURES)),
                Arguments.of(Violations.ReadsInstantNow.class, ConsensusPurityRules.noClocks(FIXTURES)),
                Arguments.of(Violations.HoldsClock.class, ConsensusPurityRules.noClocks(FIXTURES)),
                Arguments.of(Violations.MakesRandom.class, ConsensusPurityRules.noUngivenRandomness(FIXTURES)),
                Arguments.of(Violations.UsesThreadLocalRandom.class, ConsensusPurityRules.noUngivenRandomness(FIXTURES)),
                Arguments.of(Violations.UsesMathRandom.class, ConsensusPurityRules.noUngivenRandomness(FIXTURES)),
                Arguments.of(Violations.ReadsFile.class, ConsensusPurityRules.noIo(FIXTURES)),
                Arguments.of(Violations.OpensSocket.class, ConsensusPurityRules.noIo(FIXTURES)),
                Arguments.of(Violations.UsesNodeShell.class, ConsensusPurityRules.noShellOrImplementations(FIXTURES)));
    }

    @ParameterizedTest(name = "{0} breaks: {1}")
    @MethodSource("violations")
    void eachRuleFiresOnAClassThatBreaksIt(Class<?> violator, ArchRule rule) {
        EvaluationResult result = rule.evaluate(new ClassFileImporter().importClasses(violator));
        assertTrue(result.hasViolation(), rule.getDescription() + " should reject " + violator.getSimpleName());
    }

    @Test
    void aClassUsingOnlyWhatTheRulesAllowPassesEveryRule() {
        JavaClasses pure = new ClassFileImporter().importClasses(PureStep.class);
        List<ArchRule> rules = ConsensusPurityRules.all(FIXTURES);
        for (ArchRule rule : rules) {
            EvaluationResult result = rule.evaluate(pure);
            assertFalse(result.hasViolation(), rule.getDescription() + ": " + result.getFailureReport());
        }
    }
}

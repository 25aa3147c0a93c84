package io.wheelraft.core.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.lang.ArchRule;

import java.util.List;

import static com.tngtech.archunit.core.domain.JavaAccess.Predicates.target;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With.owner;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noMethods;

/**
 * What keeps the Raft algorithm a pure state machine: the classes of a package given to these
 * rules (in production {@code io.wheelraft.core.consensus}) compute from their inputs alone. Time
 * comes in as a {@code nowMs} argument, randomness as a {@link java.util.Random} they were handed,
 * and every effect leaves as data or through an SPI interface, so each behaviour is a plain
 * deterministic test and one thread of the node's lane can drive it without locks.
 *
 * <p>What each rule forbids, and what it deliberately allows:
 * <ul>
 *   <li>{@link #noThreads}: {@code Thread}, {@code ThreadLocal}, anything in
 *       {@code java.util.concurrent} itself (executors, futures, concurrent collections,
 *       {@code TimeUnit}, {@code ThreadLocalRandom}), {@code java.util.concurrent.locks},
 *       {@code java.util.Timer}, the wheel timers of {@code io.wheelraft.timer}, synchronized
 *       methods and {@code wait}/{@code notify}. Allowed: {@code java.util.concurrent.atomic}.
 *       The core runs on one thread at a time, but a few values it writes are read by other
 *       threads of the node (e.g. the recent-entries ring read by the apply thread); an atomic
 *       publishes them safely without making the core wait for or start anything.</li>
 *   <li>{@link #noClocks}: {@code System.currentTimeMillis}/{@code nanoTime}, {@code java.time.Clock}
 *       and {@code InstantSource}, any {@code now()} of {@code java.time}, {@code new Date()}.
 *       Allowed: the other {@code java.time} value types ({@code Duration}) and plain arithmetic
 *       on the caller's {@code nowMs}.</li>
 *   <li>{@link #noUngivenRandomness}: constructing {@code Random}/{@code SecureRandom}/
 *       {@code SplittableRandom}, {@code ThreadLocalRandom}, {@code Math.random},
 *       {@code UUID.randomUUID}, {@code RandomGenerator.getDefault/of}. Allowed: calling a
 *       {@code Random} that was passed in (seeded by the node or the simulation).</li>
 *   <li>{@link #noIo}: {@code java.io} (its {@code Serializable} marker aside), {@code java.nio.file},
 *       {@code java.nio.channels}, {@code java.net}, processes. Storage and transport are reached
 *       only through the {@code io.wheelraft.core.spi} interfaces the node hands in.</li>
 *   <li>{@link #noShellOrImplementations}: {@code io.wheelraft.core.node} (the shell that drives the
 *       core), and the concrete storage, transport and simulation packages.</li>
 * </ul>
 * Logging through slf4j (and the rate-limited log, which takes the caller's time) is allowed.
 *
 * <p>The rules are written by package, never by class name, so they hold whatever classes the
 * package gains. Not thread-safe to mutate; the rules themselves are immutable.
 */
public final class ConsensusPurityRules {

    private ConsensusPurityRules() {
    }

    /** Every rule for the classes in {@code packageIdentifier} (ArchUnit syntax, e.g. {@code "a.b.."}). */
    public static List<ArchRule> all(String packageIdentifier) {
        return List.of(noThreads(packageIdentifier), noSynchronizedMethods(packageIdentifier),
                noClocks(packageIdentifier), noUngivenRandomness(packageIdentifier),
                noIo(packageIdentifier), noShellOrImplementations(packageIdentifier));
    }

    public static ArchRule noThreads(String pkg) {
        DescribedPredicate<JavaClass> threading = assignableTo(Thread.class)
                .or(assignableTo(ThreadGroup.class))
                .or(assignableTo(ThreadLocal.class))
                .or(resideInAnyPackage("java.util.concurrent", "java.util.concurrent.locks"))
                .or(assignableTo(java.util.Timer.class))
                .or(assignableTo(java.util.TimerTask.class))
                .or(resideInAPackage("io.wheelraft.timer.."))
                .as("threads, executors, futures, locks, concurrent collections or timers");
        return noClasses().that().resideInAPackage(pkg)
                .should().dependOnClassesThat(threading)
                .orShould().callMethodWhere(target(owner(name(Object.class.getName())))
                        .and(target(nameMatching("wait|notify|notifyAll"))))
                .as("the Raft core in " + pkg + " starts, waits for and locks no threads")
                .because("it runs on the node's serial lane; concurrency belongs to the node shell");
    }

    public static ArchRule noSynchronizedMethods(String pkg) {
        return noMethods().that().areDeclaredInClassesThat().resideInAPackage(pkg)
                .should().haveModifier(JavaModifier.SYNCHRONIZED)
                .as("the Raft core in " + pkg + " has no synchronized methods")
                .because("it runs on the node's serial lane; concurrency belongs to the node shell");
    }

    public static ArchRule noClocks(String pkg) {
        DescribedPredicate<JavaAccess<?>> readsClock =
                target(owner(name(System.class.getName()))).and(target(nameMatching("currentTimeMillis|nanoTime")))
                        .or(target(owner(resideInAPackage("java.time"))).and(target(name("now"))))
                        .or(target(owner(name(java.util.Date.class.getName()))).and(target(name("<init>")))
                                .and(accessWithoutParameters()))
                        .as("a clock read");
        return noClasses().that().resideInAPackage(pkg)
                .should().accessTargetWhere(readsClock)
                .orShould().dependOnClassesThat(assignableTo(java.time.Clock.class)
                        .or(assignableTo(java.time.InstantSource.class)))
                .as("the Raft core in " + pkg + " reads no clock")
                .because("time comes in as the caller's nowMs, so tests drive it by hand");
    }

    public static ArchRule noUngivenRandomness(String pkg) {
        DescribedPredicate<JavaAccess<?>> makesRandomness =
                target(owner(assignableTo(java.util.Random.class)
                        .or(assignableTo(java.util.SplittableRandom.class)))).and(target(name("<init>")))
                        .or(target(owner(nameMatching("java\\.lang\\.(Strict)?Math"))).and(target(name("random"))))
                        .or(target(owner(name(java.util.UUID.class.getName()))).and(target(name("randomUUID"))))
                        .or(target(owner(resideInAPackage("java.util.random"))).and(target(nameMatching("getDefault|of"))))
                        .as("randomness it was not given");
        return noClasses().that().resideInAPackage(pkg)
                .should().accessTargetWhere(makesRandomness)
                .orShould().dependOnClassesThat(assignableTo(java.util.concurrent.ThreadLocalRandom.class))
                .as("the Raft core in " + pkg + " makes no randomness of its own")
                .because("a Random handed in by the node or the simulation keeps every run repeatable");
    }

    public static ArchRule noIo(String pkg) {
        DescribedPredicate<JavaClass> io = resideInAnyPackage("java.io..", "java.nio.file..", "java.nio.channels..", "java.net..")
                .and(DescribedPredicate.not(name(java.io.Serializable.class.getName())))
                .or(assignableTo(ProcessBuilder.class))
                .or(assignableTo(Process.class))
                .as("files, channels, sockets or processes");
        return noClasses().that().resideInAPackage(pkg)
                .should().dependOnClassesThat(io)
                .as("the Raft core in " + pkg + " does no I/O")
                .because("storage and transport are reached only through the spi interfaces the node hands in");
    }

    public static ArchRule noShellOrImplementations(String pkg) {
        return noClasses().that().resideInAPackage(pkg)
                .should().dependOnClassesThat().resideInAnyPackage("io.wheelraft.core.node..",
                        "io.wheelraft.core.sim..", "io.wheelraft.core.transport..", "io.wheelraft.core.storage..")
                .as("the Raft core in " + pkg + " uses neither the node shell nor concrete storage, transport or simulation")
                .because("the shell drives the core, never the other way round");
    }

    private static DescribedPredicate<JavaAccess<?>> accessWithoutParameters() {
        return DescribedPredicate.describe("without parameters", access ->
                access.getTarget() instanceof com.tngtech.archunit.core.domain.AccessTarget.CodeUnitAccessTarget t
                        && t.getRawParameterTypes().isEmpty());
    }
}

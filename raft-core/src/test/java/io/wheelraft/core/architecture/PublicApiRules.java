package io.wheelraft.core.architecture;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;

import java.util.LinkedHashSet;
import java.util.Set;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.members;

/**
 * Keeps raft-core's internal packages ({@code io.wheelraft.core.consensus}, the Raft algorithm,
 * and {@code io.wheelraft.core.node}, the shell that drives it) out of what users must import:
 * no public or protected method, constructor or field of a public type in any other package
 * names an internal type in its signature (parameters, return type, field type, generic
 * arguments, thrown exceptions). A user so writes against {@code io.wheelraft.core} (the node,
 * its options, {@link io.wheelraft.core.RaftGroupService}, {@link io.wheelraft.core.RaftRuntime}),
 * {@code io.wheelraft.core.spi}, and the testing tools ({@code sim}, {@code storage.memory}).
 *
 * <p>Why not a module descriptor: see docs/architecture.md, "Public API". Supertypes are not
 * checked: the simulation's runtime implements the node shell's runtime interface so the real
 * node runs on it, and a caller never needs to name that interface. Immutable.
 */
public final class PublicApiRules {

    /** The packages that are not part of the public API. */
    public static final String[] INTERNAL = {"io.wheelraft.core.consensus..", "io.wheelraft.core.node.."};

    private PublicApiRules() {
    }

    /** Public members of the public types in {@code packageIdentifier} expose no internal type. */
    public static ArchRule exposesNoInternalTypes(String packageIdentifier) {
        return members().that().areDeclaredInClassesThat().resideInAPackage(packageIdentifier)
                .and().areDeclaredInClassesThat().resideOutsideOfPackages(INTERNAL)
                .and().areDeclaredInClassesThat().arePublic()
                .should(new ArchCondition<JavaMember>("name no type of " + String.join(" or ", INTERNAL) + " in a public signature") {
                    @Override
                    public void check(JavaMember member, ConditionEvents events) {
                        if (!visibleToUsers(member)) {
                            return;
                        }
                        for (JavaClass type : signatureTypes(member)) {
                            if (isInternal(type)) {
                                events.add(SimpleConditionEvent.violated(member,
                                        member.getFullName() + " exposes internal type " + type.getName()));
                            }
                        }
                    }
                })
                .as("public API in " + packageIdentifier + " exposes no internal type of consensus or node")
                .because("users import only io.wheelraft.core, its spi and the testing tools; the internals may change at any time");
    }

    private static boolean visibleToUsers(JavaMember member) {
        Set<JavaModifier> m = member.getModifiers();
        return m.contains(JavaModifier.PUBLIC) || m.contains(JavaModifier.PROTECTED);
    }

    private static Set<JavaClass> signatureTypes(JavaMember member) {
        Set<JavaClass> types = new LinkedHashSet<>();
        if (member instanceof JavaField f) {
            types.addAll(f.getType().getAllInvolvedRawTypes());
        } else if (member instanceof JavaCodeUnit c) {
            types.addAll(c.getReturnType().getAllInvolvedRawTypes());
            for (JavaType p : c.getParameterTypes()) {
                types.addAll(p.getAllInvolvedRawTypes());
            }
            c.getThrowsClause().getTypes().forEach(types::add);
        }
        return types;
    }

    private static boolean isInternal(JavaClass type) {
        String pkg = type.getPackageName();
        return pkg.equals("io.wheelraft.core.consensus") || pkg.startsWith("io.wheelraft.core.consensus.")
                || pkg.equals("io.wheelraft.core.node") || pkg.startsWith("io.wheelraft.core.node.");
    }
}

package io.wheelraft.example;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** --help documents every option with its default, --version names the build, typos get suggestions. */
class CliHelpTest {

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    private static List<CommandLine> allCommands() {
        CommandLine root = new CommandLine(new Main());
        CliConventions.apply(root);
        List<CommandLine> all = new ArrayList<>();
        all.add(root);
        all.addAll(root.getSubcommands().values());
        return all;
    }

    @Test
    void everyOptionAndParameterHasADescriptionAndEveryOptionalOneADefault() {
        List<String> problems = new ArrayList<>();
        for (CommandLine c : allCommands()) {
            String cmd = c.getCommandName();
            for (CommandLine.Model.OptionSpec o : c.getCommandSpec().options()) {
                if (o.hidden()) {
                    continue;
                }
                if (String.join(" ", o.description()).isBlank()) {
                    problems.add(cmd + " " + o.longestName() + ": no description");
                }
                boolean helpOrVersion = o.usageHelp() || o.versionHelp();
                if (!o.required() && !helpOrVersion && o.defaultValue() == null && !String.join(" ", o.description()).contains("Default:")) {
                    problems.add(cmd + " " + o.longestName() + ": no default shown");
                }
            }
            for (CommandLine.Model.PositionalParamSpec p : c.getCommandSpec().positionalParameters()) {
                if (!p.hidden() && String.join(" ", p.description()).isBlank()) {
                    problems.add(cmd + " " + p.paramLabel() + ": no description");
                }
            }
        }
        assertEquals(List.of(), problems);
    }

    @Test
    void everyCommandsHelpRendersWithoutPicocliWarnings() {
        // picocli formats descriptions with String.format: a bare % makes it warn on standard error
        // (three times per --help) and print the raw text; the warning bypasses Main's streams.
        java.io.PrintStream realErr = System.err;
        java.io.ByteArrayOutputStream warnings = new java.io.ByteArrayOutputStream();
        try {
            System.setErr(new java.io.PrintStream(warnings, true, java.nio.charset.StandardCharsets.UTF_8));
            for (CommandLine c : allCommands()) {
                c.getUsageMessage();
            }
        } finally {
            System.setErr(realErr);
        }
        assertEquals("", warnings.toString(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void helpShowsDefaults() {
        CliRun r = run("server", "--help");
        assertEquals(0, r.code());
        assertTrue(r.out().contains("--election-timeout-ms=N") && r.out().contains("Default: 1000"), r.out());
        assertTrue(run("client", "--help").out().contains("Default: 10000"));
    }

    @Test
    void versionIsTheBuildsMavenVersionOnEveryCommand() {
        CliRun top = run("--version");
        assertEquals(0, top.code());
        assertTrue(top.out().strip().matches("wheelraft-counter \\d+\\.\\d+\\.\\d+\\S*"), top.out());
        assertEquals(top.out(), run("server", "--version").out());
        assertEquals(top.out(), run("status", "--version").out());
    }

    @Test
    void aMistypedSubcommandGetsASuggestion() {
        CliRun r = run("sever", "--data", "d");
        assertEquals(2, r.code());
        assertEquals(1, r.err().strip().split("\n").length, r.err());
        assertTrue(r.err().contains("did you mean server"), r.err());
    }

    @Test
    void aMistypedOptionGetsASuggestion() {
        CliRun r = run("client", "--peer", "127.0.0.1:1", "get");
        assertEquals(2, r.code());
        assertEquals(1, r.err().strip().split("\n").length, r.err());
        assertTrue(r.err().contains("did you mean --peers"), r.err());
        assertFalse(r.err().contains("\tat "));
    }
}

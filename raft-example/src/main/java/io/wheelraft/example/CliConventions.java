package io.wheelraft.example;

import picocli.CommandLine;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Properties;

/**
 * What every subcommand of the command line shares: {@code --help} shows each option's default,
 * {@code --version} prints the build's Maven version, and a mistyped subcommand or option is
 * answered with picocli's closest matches on the same one error line. Stateless.
 */
final class CliConventions {

    private static final String VERSION_RESOURCE = "/io/wheelraft/example/version.properties";

    private CliConventions() {
    }

    /** Applies the conventions to {@code cli} and all its subcommands (call after they are added). */
    static void apply(CommandLine cli) {
        CommandLine.IVersionProvider version = () -> new String[] {Main.NAME + " " + version()};
        apply(cli, version);
    }

    private static void apply(CommandLine c, CommandLine.IVersionProvider version) {
        c.getCommandSpec().usageMessage().showDefaultValues(true);
        c.getCommandSpec().versionProvider(version);
        for (CommandLine sub : c.getSubcommands().values()) {
            apply(sub, version);
        }
    }

    /** The project version the jar was built from, e.g. {@code 0.1.0-SNAPSHOT}. */
    static String version() {
        try (InputStream in = CliConventions.class.getResourceAsStream(VERSION_RESOURCE)) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                String v = p.getProperty("version", "");
                if (!v.isBlank() && !v.contains("${")) {
                    return v.trim();
                }
            }
        } catch (IOException e) {
            // fall through: the version is only informative
        }
        return "(version unknown: not built by Maven)";
    }

    /** The one error line for a bad command line, with picocli's suggestions when it has some. */
    static String errorLine(CommandLine.ParameterException ex, String firstLine, String[] args) {
        if (ex instanceof CommandLine.UnmatchedArgumentException u) {
            List<String> suggestions = u.getSuggestions();
            if (!suggestions.isEmpty()) {
                return firstLine + "; did you mean " + String.join(" or ", suggestions.subList(0, Math.min(3, suggestions.size()))) + "?";
            }
        }
        // A command with positional parameters takes an unknown option as one of them, and then
        // complains about something else (a required option missing): name the unknown one too.
        CommandLine.Model.CommandSpec spec = ex.getCommandLine().getCommandSpec();
        for (String arg : args) {
            String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
            if (!name.startsWith("--") || name.length() < 3 || spec.findOption(name) != null) {
                continue;
            }
            List<String> close = spec.options().stream().filter(o -> !o.hidden())
                    .flatMap(o -> java.util.Arrays.stream(o.names()))
                    .filter(n -> n.startsWith("--") && distance(n, name) <= 2).sorted().toList();
            return firstLine + " (unknown option '" + name + "'" + (close.isEmpty() ? "" : "; did you mean " + String.join(" or ", close) + "?") + ")";
        }
        return firstLine;
    }

    /** Levenshtein distance, for option names (a few dozen characters). */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}

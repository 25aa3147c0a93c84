package io.wheelraft.example;

import ch.qos.logback.classic.Level;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * The {@code wheelraft-counter} command line: {@code server}, {@code client}, {@code status},
 * {@code admin}, {@code bench}, {@code chaos}, {@code demo}, {@code verify} and {@code groups-bench}. Standard output carries only
 * answers; logs go to standard error. Bad input is one line on standard error and exit 2;
 * a command that cannot do its job is one line and exit 1; never a stack trace.
 */
@Command(name = "wheelraft-counter", mixinStandardHelpOptions = true,
        description = "A replicated counter on WheelRaft: run nodes, use them, break them.",
        subcommands = {ServerCommand.class, ClientCommand.class, StatusCommand.class, AdminCommand.class,
                BenchCommand.class, ChaosCommand.class, DemoCommand.class, VerifyCommand.class, GroupsBenchCommand.class})
public final class Main implements Runnable {

    static final String NAME = "wheelraft-counter";
    private static final Logger LOG = LoggerFactory.getLogger(Main.class);
    /** Subcommands whose own logging is part of their job; the others log warnings only. */
    private static final Set<String> CHATTY = Set.of("server");

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "a subcommand is required: server, client, status, admin, bench, chaos, demo, verify or groups-bench");
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command line and returns its exit code (never calls System.exit). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        quietLogsUnlessServer(args);
        PrintWriter outWriter = new PrintWriter(new java.io.OutputStreamWriter(out, StandardCharsets.UTF_8), true);
        PrintWriter errWriter = new PrintWriter(new java.io.OutputStreamWriter(err, StandardCharsets.UTF_8), true);
        CommandLine cli = new CommandLine(new Main());
        cli.setOut(outWriter);
        cli.setErr(errWriter);
        CliConventions.apply(cli);
        cli.setParameterExceptionHandler((ex, a) -> {
            errWriter.println(NAME + ": " + CliConventions.errorLine(ex, firstLine(ex.getMessage()), a));
            errWriter.flush();
            return CliException.USAGE;
        });
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof CliException c) {
                errWriter.println(NAME + ": " + firstLine(c.getMessage()));
                errWriter.flush();
                return c.exitCode();
            }
            LOG.debug("command failed", ex);
            errWriter.println(NAME + ": internal error: " + firstLine(String.valueOf(ex)));
            errWriter.flush();
            return CliException.FAILED;
        });
        int code = cli.execute(args);
        outWriter.flush();
        errWriter.flush();
        return code;
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return (nl < 0 ? s : s.substring(0, nl)).trim();
    }

    /**
     * gRPC and Netty log through java.util.logging, which printed a two-line header and a stack
     * trace to standard error for every client that went away mid-call ("Stream Error"). Routed
     * through logback, they follow logback.xml's format and levels.
     */
    private static void routeJavaUtilLogging() {
        if (!org.slf4j.bridge.SLF4JBridgeHandler.isInstalled()) {
            org.slf4j.bridge.SLF4JBridgeHandler.removeHandlersForRootLogger();
            org.slf4j.bridge.SLF4JBridgeHandler.install();
        }
    }

    private static void quietLogsUnlessServer(String[] args) {
        routeJavaUtilLogging();
        if (System.getProperty("wheelraft.log.level") != null) {
            return;
        }
        boolean chatty = args.length > 0 && CHATTY.contains(args[0]);
        if (LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME) instanceof ch.qos.logback.classic.Logger root) {
            root.setLevel(chatty ? Level.INFO : Level.WARN);
        }
    }
}

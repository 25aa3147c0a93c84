package io.wheelraft.example;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code client}: one command ({@code incr [DELTA]} prints the new value, {@code get} the value)
 * or, with {@code --interactive}, one answer line per input line. One-shot exit codes: 0 ok,
 * 1 certainly not applied, 3 unknown, 2 bad usage.
 */
@Command(name = "client", description = "Increment or read the counter.", mixinStandardHelpOptions = true)
final class ClientCommand implements Callable<Integer> {

    static final int EXIT_UNKNOWN = 3;

    /** Where interactive commands are read from (tests replace it). */
    static InputStream input = System.in;

    @Spec
    CommandSpec spec;

    @Option(names = "--peers", required = true, paramLabel = "LIST", description = "The cluster's nodes, HOST:PORT,...")
    String peers;

    @Option(names = "--timeout-ms", defaultValue = "10000", paramLabel = "N",
            description = "How long one command retries through leader changes before answering unknown.")
    long timeoutMs;

    @Option(names = "--attempt-timeout-ms", defaultValue = "1000", paramLabel = "N",
            description = "Deadline of one attempt at one node.")
    long attemptTimeoutMs;

    @Option(names = "--group", paramLabel = "G",
            description = "The counter group, 0..N-1, of servers started with --groups N. Default: the one counter.")
    Integer group;

    @Option(names = "--interactive", defaultValue = "false", description = "Read 'incr DELTA' or 'get' lines from standard input; answer each with one line.")
    boolean interactive;

    @Parameters(arity = "0..2", paramLabel = "COMMAND", description = "incr [DELTA] | get")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() throws IOException {
        List<String> endpoints = Addresses.endpoints(Addresses.parseList("--peers", peers));
        if (timeoutMs <= 0 || attemptTimeoutMs <= 0) {
            throw CliException.usage("--timeout-ms and --attempt-timeout-ms must be positive");
        }
        if (interactive && !command.isEmpty()) {
            throw CliException.usage("--interactive reads commands from standard input; do not also give '" + String.join(" ", command) + "'");
        }
        if (group != null && group < 0) {
            throw CliException.usage("--group must be 0 or more (groups 0..N-1 of servers started with --groups N), was " + group);
        }
        Request one = null;
        if (!interactive) {
            if (command.isEmpty()) {
                throw CliException.usage("client needs a command: incr [DELTA] or get (or --interactive)");
            }
            one = Request.parse(String.join(" ", command));
        }
        PrintWriter out = spec.commandLine().getOut();
        try (ClusterChannels cluster = new ClusterChannels(endpoints)) {
            CounterClient client = new CounterClient(cluster, group == null ? CounterServiceImpl.GROUP_ID : CounterGroups.groupId(group),
                    timeoutMs, Math.min(attemptTimeoutMs, timeoutMs));
            if (interactive) {
                return interactive(client, out);
            }
            CounterClient.Outcome outcome = one.run(client);
            switch (outcome.kind()) {
                case OK -> {
                    out.println(outcome.value());
                    out.flush();
                    return 0;
                }
                case FAIL -> throw new CliException(CliException.FAILED, "fail " + outcome.reason());
                default -> throw new CliException(EXIT_UNKNOWN, "unknown " + outcome.reason());
            }
        }
    }

    private static int interactive(CounterClient client, PrintWriter out) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(input, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String answer;
            try {
                answer = Request.parse(line).run(client).line();
            } catch (CliException e) {
                answer = "fail " + e.getMessage();
            }
            out.println(answer);
            out.flush();
        }
        return 0;
    }

    /** One parsed command: incr DELTA or get. */
    record Request(boolean incr, long delta) {
        static Request parse(String line) {
            String[] words = line.trim().split("\\s+");
            if (words.length == 0 || words[0].isEmpty()) {
                throw CliException.usage("empty command; expected 'incr [DELTA]' or 'get'");
            }
            switch (words[0]) {
                case "get" -> {
                    if (words.length != 1) {
                        throw CliException.usage("'get' takes no argument, got '" + line.trim() + "'");
                    }
                    return new Request(false, 0);
                }
                case "incr" -> {
                    if (words.length > 2) {
                        throw CliException.usage("'incr' takes one DELTA, got '" + line.trim() + "'");
                    }
                    if (words.length == 1) {
                        return new Request(true, 1);
                    }
                    try {
                        return new Request(true, Long.parseLong(words[1]));
                    } catch (NumberFormatException e) {
                        throw CliException.usage("DELTA '" + words[1] + "' is not a whole number");
                    }
                }
                default -> throw CliException.usage("unknown client command '" + words[0] + "'; expected 'incr [DELTA]' or 'get'");
            }
        }

        CounterClient.Outcome run(CounterClient client) {
            return settle(incr ? client.incr(delta) : client.get());
        }

        /**
         * The contract's rule for what is printed: a {@code get} never answers {@code unknown}.
         * A read changes nothing, so when it did not complete (timed out, the leader was lost)
         * nothing was applied: {@code fail}, exit 1, and retrying is always safe.
         */
        CounterClient.Outcome settle(CounterClient.Outcome outcome) {
            if (incr || outcome.kind() != CounterClient.Outcome.Kind.UNKNOWN) {
                return outcome;
            }
            return new CounterClient.Outcome(CounterClient.Outcome.Kind.FAIL, 0,
                    outcome.reason() + " (a read changes nothing; retry it)", outcome.servedBy());
        }
    }
}

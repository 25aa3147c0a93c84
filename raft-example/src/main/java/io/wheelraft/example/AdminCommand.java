package io.wheelraft.example;

import picocli.CommandLine.Command;

import java.util.concurrent.Callable;

/** {@code admin}. */
@Command(name = "admin", mixinStandardHelpOptions = true)
final class AdminCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw CliException.failed("not yet");
    }
}

package io.wheelraft.example;

import picocli.CommandLine.Command;

import java.util.concurrent.Callable;

/** {@code chaos}. */
@Command(name = "chaos", mixinStandardHelpOptions = true)
final class ChaosCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw CliException.failed("not yet");
    }
}

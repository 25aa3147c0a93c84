package io.wheelraft.example;

import picocli.CommandLine.Command;

import java.util.concurrent.Callable;

/** {@code bench}. */
@Command(name = "bench", mixinStandardHelpOptions = true)
final class BenchCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw CliException.failed("not yet");
    }
}

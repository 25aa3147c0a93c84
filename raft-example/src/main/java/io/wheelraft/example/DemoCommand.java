package io.wheelraft.example;

import picocli.CommandLine.Command;

import java.util.concurrent.Callable;

/** {@code demo}. */
@Command(name = "demo", mixinStandardHelpOptions = true)
final class DemoCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw CliException.failed("not yet");
    }
}

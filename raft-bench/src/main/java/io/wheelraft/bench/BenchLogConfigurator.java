package io.wheelraft.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import org.slf4j.Logger;

/**
 * Logging for every JVM started from raft-bench's class path (the runner, the SOFAJRaft and Ratis
 * servers, the floor probe): warnings only, to standard error. Per-request logging would cost CPU
 * on the shared cores and skew the comparison.
 *
 * <p>Why a configurator and not a {@code logback.xml}: the class path also holds raft-example's
 * jar and its {@code logback.xml}; with two such files logback warns and then prints its whole
 * start-up status on standard output, in the middle of the runner's results. Logback asks
 * configurators found through {@code ServiceLoader} before it looks for any file. WheelRaft's own
 * servers run from their jar and keep its configuration.
 */
public final class BenchLogConfigurator extends ContextAwareBase implements Configurator {

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern("%d{HH:mm:ss.SSS} %-5level [%thread] %logger{24} - %msg%n");
        encoder.start();
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("STDERR");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.WARN);
        root.addAppender(stderr);
        // SOFAJRaft's Bolt client logs a warning with a stack trace for every connection it tries
        // while the servers are still starting (some 120 per run); its errors still show.
        context.getLogger("com.alipay.sofa.common.log").setLevel(Level.ERROR);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}

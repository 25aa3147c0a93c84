package io.wheelraft.example.kv;

import io.wheelraft.example.LocalClusterPorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Runs the key-value example of docs/embedding.md end to end, so the page's code keeps working. */
class KeyValueExampleTest {

    @TempDir
    Path dir;

    @Test
    void theEmbeddingGuidesExampleRunsAsDocumented() throws Exception {
        List<Integer> ports = LocalClusterPorts.free(3);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        KeyValueExample.run(dir, new int[] {ports.get(0), ports.get(1), ports.get(2)}, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals("previous color: 'red'", lines.get(0));
        assertEquals("linearizable read: blue", lines.get(1));
        assertEquals("stale read (this client's writes included): blue", lines.get(2));
        assertEquals(true, lines.get(3).startsWith("killed the leader "));
        assertEquals(true, lines.get(4).startsWith("100 writes acknowledged by the new leader "));
        assertEquals("the restarted member has caught up: color=green", lines.get(5));
        for (int i = 6; i < 9; i++) {
            assertEquals(true, lines.get(i).endsWith(": ok"), lines.get(i));
        }
        assertEquals("key42 = 42", lines.get(9));
    }

    @Test
    void theGuideListsTheExampleVerbatim() throws Exception {
        // Tests run in the module directory; the guide is in the repository's docs.
        String source = java.nio.file.Files.readString(Path.of("src/main/java/io/wheelraft/example/kv/KeyValueExample.java"));
        String guide = java.nio.file.Files.readString(Path.of("../docs/embedding.md"));
        assertEquals(true, guide.contains("```java\n" + source + "```"),
                "docs/embedding.md must list KeyValueExample.java exactly; paste the file's current text into section 2");
    }
}

package io.wheelraft.example;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Needs Linux and root (CI has both): mounts a real 1 MiB tmpfs. */
class TmpfsDiskTest {

    @TempDir
    Path dir;

    @Test
    void fillLeavesNotOneByteFreeAndFreeGivesTheSpaceBack() throws Exception {
        assumeTrue(TmpfsDisk.unsupportedReason() == null, "needs Linux and root: " + TmpfsDisk.unsupportedReason());
        Path mount = dir.resolve("disk");
        try (TmpfsDisk disk = TmpfsDisk.mount(mount, 1 << 20)) {
            Files.write(mount.resolve("node-file"), new byte[100_000]);
            long filler = disk.fill();
            assertTrue(filler > 800_000 && filler < 1 << 20, "filler " + filler);
            assertEquals(0, disk.freeBytes());
            // Not even one more byte fits, in the filler or in a new file.
            assertThrows(IOException.class, () -> {
                try (OutputStream out = Files.newOutputStream(mount.resolve("one-more"))) {
                    out.write(1);
                }
            });
            disk.free();
            assertTrue(disk.freeBytes() >= filler - 8192, "freed: " + disk.freeBytes());
        }
        assertTrue(Files.readAllLines(Path.of("/proc/mounts")).stream().noneMatch(l -> l.contains(mount.toString())), "still mounted");
    }
}

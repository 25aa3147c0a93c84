package io.wheelraft.example;

import java.io.IOException;
import java.util.List;

/** Test access to {@link LocalCluster#freePorts} from other packages. */
public final class LocalClusterPorts {

    private LocalClusterPorts() {
    }

    public static List<Integer> free(int n) throws IOException {
        return LocalCluster.freePorts(n);
    }
}

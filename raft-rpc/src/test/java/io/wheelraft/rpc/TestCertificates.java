package io.wheelraft.rpc;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Generates a throw-away PKI for TLS tests with the JDK's {@code keytool}: a CA, and key stores
 * holding certificates it signed for 127.0.0.1/localhost. Nothing is fixed or checked in.
 */
final class TestCertificates {

    static final char[] PASSWORD = "changeit".toCharArray();

    private final Path dir;

    TestCertificates(Path dir) {
        this.dir = dir;
    }

    /** Creates CA {@code ca} (its key store and a PKCS#12 trust store holding its certificate). */
    void createCa(String ca) throws IOException, InterruptedException {
        keytool("-genkeypair", "-alias", ca, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + ca,
                "-ext", "bc:c", "-validity", "2", "-keystore", store(ca), "-storetype", "PKCS12");
        keytool("-exportcert", "-alias", ca, "-rfc", "-file", dir.resolve(ca + ".pem").toString(), "-keystore", store(ca));
        keytool("-importcert", "-noprompt", "-alias", ca, "-file", dir.resolve(ca + ".pem").toString(),
                "-keystore", trustStore(ca).toString(), "-storetype", "PKCS12");
    }

    /** Creates key store {@code name} with a key and a certificate signed by {@code ca}. */
    void createSigned(String name, String ca) throws IOException, InterruptedException {
        keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + name,
                "-validity", "2", "-keystore", store(name), "-storetype", "PKCS12");
        String csr = dir.resolve(name + ".csr").toString();
        String cert = dir.resolve(name + ".pem").toString();
        keytool("-certreq", "-alias", name, "-file", csr, "-keystore", store(name));
        keytool("-gencert", "-alias", ca, "-infile", csr, "-outfile", cert, "-rfc", "-validity", "2",
                "-ext", "san=ip:127.0.0.1,dns:localhost", "-ext", "eku=serverAuth,clientAuth", "-keystore", store(ca));
        keytool("-importcert", "-noprompt", "-alias", ca, "-file", dir.resolve(ca + ".pem").toString(), "-keystore", store(name));
        keytool("-importcert", "-alias", name, "-file", cert, "-keystore", store(name));
    }

    /** TLS with {@code name}'s key and trust in {@code trustedCa}. */
    TlsConfig tls(String name, String trustedCa) {
        return TlsConfig.fromPkcs12(keyStore(name), PASSWORD, trustStore(trustedCa), PASSWORD);
    }

    Path keyStore(String name) {
        return dir.resolve(name + ".p12");
    }

    Path trustStore(String ca) {
        return dir.resolve(ca + "-trust.p12");
    }

    private String store(String name) {
        return keyStore(name).toString();
    }

    private void keytool(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        cmd.add("-storepass");
        cmd.add(new String(PASSWORD));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] output = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool " + String.join(" ", args) + " failed: " + new String(output));
        }
    }
}

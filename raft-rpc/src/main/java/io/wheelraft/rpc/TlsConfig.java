package io.wheelraft.rpc;

import io.grpc.ChannelCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;

import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Objects;

/**
 * TLS for the transport: this process's certificate and key, and the CA it trusts for peers.
 * With {@link #mutual()} (the default of every factory) the server demands a client certificate
 * signed by that CA, so a client without one reaches no node. Peer certificates must name the
 * host used in peer addresses (subject alternative name: DNS name or IP), as clients verify it.
 * Immutable and thread-safe.
 */
public final class TlsConfig {

    private final KeyMaterial key;
    private final TrustMaterial trust;
    private final boolean mutual;

    private TlsConfig(KeyMaterial key, TrustMaterial trust, boolean mutual) {
        this.key = key;
        this.trust = trust;
        this.mutual = mutual;
    }

    /**
     * From PEM files: a certificate chain, its private key (PKCS#8, unencrypted) and the trusted CA
     * certificates. Mutual authentication on.
     */
    public static TlsConfig fromPemFiles(Path certificateChain, Path privateKey, Path trustedCa) {
        requireReadable("certificate chain", certificateChain);
        requireReadable("private key", privateKey);
        requireReadable("trusted CA", trustedCa);
        return new TlsConfig(new KeyMaterial(certificateChain.toFile(), privateKey.toFile(), null),
                new TrustMaterial(trustedCa.toFile(), null), true);
    }

    /**
     * From PKCS#12 key stores: one holding this process's key and certificate chain, one holding
     * the trusted CA certificates. Mutual authentication on.
     *
     * @throws IllegalArgumentException naming the store that cannot be read or opened
     */
    public static TlsConfig fromPkcs12(Path keyStore, char[] keyStorePassword, Path trustStore, char[] trustStorePassword) {
        try {
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(load("key store", keyStore, keyStorePassword), keyStorePassword);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(load("trust store", trustStore, trustStorePassword));
            return fromManagers(kmf.getKeyManagers(), tmf.getTrustManagers());
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot build TLS managers from " + keyStore + " and " + trustStore + ": " + e.getMessage(), e);
        }
    }

    /** From ready-made JSSE managers. Mutual authentication on. */
    public static TlsConfig fromManagers(KeyManager[] keyManagers, TrustManager[] trustManagers) {
        Objects.requireNonNull(keyManagers, "keyManagers");
        Objects.requireNonNull(trustManagers, "trustManagers");
        return new TlsConfig(new KeyMaterial(null, null, keyManagers), new TrustMaterial(null, trustManagers), true);
    }

    /** The same material with client authentication off: only clients check the server. */
    public TlsConfig withoutClientAuth() {
        return new TlsConfig(key, trust, false);
    }

    public boolean mutual() {
        return mutual;
    }

    ServerCredentials serverCredentials() {
        TlsServerCredentials.Builder b = TlsServerCredentials.newBuilder();
        try {
            if (key.managers != null) {
                b.keyManager(key.managers);
            } else {
                b.keyManager(key.certificateChain, key.privateKey);
            }
            if (trust.managers != null) {
                b.trustManager(trust.managers);
            } else {
                b.trustManager(trust.caFile);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read TLS files: " + e.getMessage(), e);
        }
        b.clientAuth(mutual ? TlsServerCredentials.ClientAuth.REQUIRE : TlsServerCredentials.ClientAuth.NONE);
        return b.build();
    }

    ChannelCredentials channelCredentials() {
        TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
        try {
            if (key.managers != null) {
                b.keyManager(key.managers);
            } else {
                b.keyManager(key.certificateChain, key.privateKey);
            }
            if (trust.managers != null) {
                b.trustManager(trust.managers);
            } else {
                b.trustManager(trust.caFile);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read TLS files: " + e.getMessage(), e);
        }
        return b.build();
    }

    private static KeyStore load(String what, Path path, char[] password) throws GeneralSecurityException {
        requireReadable(what, path);
        try (InputStream in = Files.newInputStream(path)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, password);
            return ks;
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot open " + what + " " + path + ": " + e.getMessage(), e);
        }
    }

    private static void requireReadable(String what, Path path) {
        if (path == null) {
            throw new IllegalArgumentException(what + " path is missing (null)");
        }
        if (!Files.isReadable(path)) {
            throw new IllegalArgumentException(what + " file " + path + " does not exist or is not readable");
        }
    }

    private record KeyMaterial(File certificateChain, File privateKey, KeyManager[] managers) {
    }

    private record TrustMaterial(File caFile, TrustManager[] managers) {
    }
}

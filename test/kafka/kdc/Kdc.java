// Kdc runs a Kerberos KDC for catchup's GSSAPI tests: Apache Kerby's
// SimpleKdcServer (what Kafka's MiniKdc is built on), TCP only, on
// 127.0.0.1:PORT, realm REALM, its database in memory. It makes the
// principals and writes into DIR:
//   broker.keytab  the broker's service principal kafka/HOST
//   client.keytab  the client principal catchup
//   password       the password of the client principal catchup-pw
// then prints "KDC ready" on stdout and serves until it is killed.
// Usage: java -cp 'LIBS/*' Kdc.java DIR REALM PORT HOST
import java.io.File;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.util.HexFormat;

import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;

public class Kdc {
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: Kdc DIR REALM PORT HOST");
            System.exit(2);
        }
        File dir = new File(args[0]);
        String realm = args[1], host = args[3];
        int port = Integer.parseInt(args[2]);
        SimpleKdcServer kdc = new SimpleKdcServer();
        kdc.setWorkDir(dir);
        kdc.setKdcHost("127.0.0.1");
        kdc.setKdcRealm(realm);
        kdc.setKdcTcpPort(port);
        kdc.setAllowUdp(false);
        kdc.setAllowTcp(true);
        kdc.init();
        kdc.start();
        kdc.createAndExportPrincipals(new File(dir, "broker.keytab"), "kafka/" + host);
        kdc.createAndExportPrincipals(new File(dir, "client.keytab"), "catchup");
        byte[] pw = new byte[16];
        new SecureRandom().nextBytes(pw);
        String password = HexFormat.of().formatHex(pw);
        kdc.createPrincipal("catchup-pw", password);
        Files.writeString(new File(dir, "password").toPath(), password);
        System.out.println("KDC ready");
        System.out.flush();
        Thread.currentThread().join();
    }
}

package mirrormaker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kafka-catchup/catchup/internal/config"
)

// FuzzFromMirrorMaker converts arbitrary consumer and producer property
// files: the conversion never panics, always returns a Migration, and a
// conversion without error gives YAML that Parse accepts as it is.
func FuzzFromMirrorMaker(f *testing.F) {
	f.Add([]byte(plainConsumer), []byte(plainProducer), ".*")
	f.Add([]byte(plainConsumer+"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=x.PlainLoginModule required username=\"u\" password=\"p\";\n"),
		[]byte(plainProducer+"acks=all\ncompression.type=zstd\n"), "a,b")
	f.Add([]byte("bootstrap.servers=\\\n  a:1\ngroup.id=g\\u0041\n"), []byte("bootstrap.servers=b:1\nssl.truststore.location=/x.jks\n"), "t.*")
	f.Fuzz(func(t *testing.T, consumer, producer []byte, whitelist string) {
		m, err := Convert([]File{{Name: "c.properties", Data: consumer}},
			File{Name: "p.properties", Data: producer}, Flags{Whitelist: whitelist})
		if m == nil {
			t.Fatalf("Convert returned a nil Migration (err %v)", err)
		}
		if err != nil {
			// A failed conversion may still carry the draft YAML that
			// --print-config shows beside its problems, but never a File.
			if m.File != nil {
				t.Errorf("Convert failed (%v) but returned a File", err)
			}
			return
		}
		if m.File == nil {
			t.Fatalf("Convert succeeded without a File; YAML:\n%s", m.YAML)
		}
		if _, err := config.Parse(m.YAML, "catchup.yaml"); err != nil {
			t.Errorf("Parse of the converted YAML: %v\n%s", err, m.YAML)
		}
	})
}

// FuzzJAASPassword puts any password (or OAuth client secret) into sasl.jaas.config, quoted and
// escaped as JAAS wants it: the converter must read it back exactly, and it
// must reach neither the YAML nor a notice nor the error.
func FuzzJAASPassword(f *testing.F) {
	for _, pw := range []string{"secret-1", `pa"ss;w0rd`, `back\slash`, "with space and = sign", "ünïcødé-pässwörd", "odd-secret-77"} {
		f.Add(pw)
	}
	f.Fuzz(func(t *testing.T, pw string) {
		fixed := plainConsumer + plainProducer + "PlainLoginModule required username=u" + oauthConsumer
		if len(pw) < 6 || strings.ContainsAny(pw, "\r\n\x00") || strings.Contains(fixed, pw) {
			t.Skip("too short to find in the output, or not one line of a .properties file")
		}
		quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(pw)
		// .properties escaping on top: a backslash is written twice.
		escaped := strings.ReplaceAll(quoted, `\`, `\\`)
		// The password of a PLAIN login, or (odd lengths) the client
		// secret of an OAuth login, which is kept as a password is.
		line := `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + escaped + `";`
		consumer := plainConsumer + "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n" + line + "\n"
		if len(pw)%2 == 1 {
			consumer = plainConsumer + strings.Replace(oauthConsumer, `clientSecret="oauth-secret-1"`, `clientSecret="`+escaped+`"`, 1)
		}
		m, err := convert(t, consumer, plainProducer, Flags{Whitelist: "t"})
		everything := string(m.YAML)
		if err != nil {
			everything += err.Error()
		}
		for _, n := range m.Notices {
			everything += n.String()
		}
		if strings.Contains(everything, pw) {
			t.Fatalf("the password %q reached the output:\n%s", pw, everything)
		}
		if err != nil {
			t.Fatalf("Convert: %v", err)
		}
		want := pw
		if !utf8.ValidString(pw) {
			// The file is then read as ISO-8859-1, as Java reads it: each
			// byte is the code point of the same number.
			r := make([]rune, len(pw))
			for i := range len(pw) {
				r[i] = rune(pw[i])
			}
			want = string(r)
		}
		if got := m.Passwords["CATCHUP_C_PASSWORD"].Reveal(); got != want {
			t.Errorf("Passwords[CATCHUP_C_PASSWORD] = %q, want %q", got, want)
		}
	})
}

// FuzzConvertMM2 converts arbitrary MirrorMaker 2 configurations, seeded
// with the three shapes of testdata/mm2: the conversion never panics,
// always returns a Migration, a conversion without error gives YAML that
// Parse accepts, and a password of a seed never reaches a notice.
func FuzzConvertMM2(f *testing.F) {
	for _, name := range []string{"dedicated.properties", "connect.json", "strimzi.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "mm2", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ConvertMM2(File{Name: "mm2", Data: data}, Flags{})
		if m == nil {
			t.Fatalf("ConvertMM2 returned a nil Migration (err %v)", err)
		}
		for _, n := range m.Notices {
			// A notice may quote the value of the setting it names (a
			// broker address that is not host:port, the cluster names),
			// wherever the fuzzer moved a seed password; but never under a
			// setting that holds a secret, and never without a setting's
			// name (a fragment of a value read as a line or a key of its
			// own). A password may come back as a key only as the name of
			// a setting the file itself wrote (a dotted name without
			// quotes, spaces or separators).
			plain := n.Key != "" && !strings.ContainsAny(n.Key, "\"';=: \t\\")
			name := plain && strings.Contains(n.Key, ".")
			for _, pw := range []string{"p-secret", "b-secret", "s3cret"} {
				if strings.Contains(n.Msg, pw) && (!plain || secretKey(n.Key)) || strings.Contains(n.Key, pw) && !name {
					t.Errorf("a password in a notice: %s", n)
				}
			}
		}
		if err != nil {
			if m.File != nil {
				t.Errorf("ConvertMM2 failed (%v) but returned a File", err)
			}
			return
		}
		if _, err := config.Parse(m.YAML, "catchup.yaml"); err != nil {
			t.Errorf("Parse of the converted YAML: %v\n%s", err, m.YAML)
		}
	})
}

// secretKey reports whether a setting named k holds a secret, or a value
// that may carry one (a JAAS configuration).
func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"password", "jaas", "secret", "token", "keytab", "credential"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

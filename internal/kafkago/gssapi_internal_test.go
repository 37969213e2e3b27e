package kafkago

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/segmentio/kafka-go/sasl"

	"github.com/kafka-catchup/catchup/internal/config"
)

// acceptorOffer is the broker's wrap token (RFC 4121 section 4.2.6.2, the
// acceptor flag set, integrity only) carrying offer, made with gokrb5 as
// the Java broker makes it with the session key.
func acceptorOffer(t *testing.T, key types.EncryptionKey, offer []byte) []byte {
	t.Helper()
	wt := gssapi.WrapToken{Flags: 0x01, EC: 12, Payload: offer}
	if err := wt.SetCheckSum(key, keyusage.GSSAPI_ACCEPTOR_SEAL); err != nil {
		t.Fatal(err)
	}
	b, err := wt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sessionKey(t *testing.T) types.EncryptionKey {
	t.Helper()
	k := types.EncryptionKey{KeyType: etypeID.AES128_CTS_HMAC_SHA1_96, KeyValue: make([]byte, 16)}
	if _, err := rand.Read(k.KeyValue); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestGSSAPISecurityLayer: after the AP-REQ, the client verifies the
// broker's offer with the session key, answers with an initiator wrap token
// that selects no security layer and a maximum size of 0 (RFC 4752 section
// 3.1), and is done at the broker's empty answer, not before: kafka-go does
// not send the response of a step that reports done.
func TestGSSAPISecurityLayer(t *testing.T) {
	key := sessionKey(t)
	s := &gssapiSession{key: key, spn: "kafka/broker-1"}
	done, resp, err := s.Next(t.Context(), acceptorOffer(t, key, []byte{0x07, 0x00, 0x10, 0x00}))
	if err != nil || done {
		t.Fatalf("offer: done %v, err %v; want a response and not done", done, err)
	}
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(resp, false); err != nil {
		t.Fatalf("the response is no initiator wrap token: %v", err)
	}
	if ok, err := wt.Verify(key, keyusage.GSSAPI_INITIATOR_SEAL); !ok {
		t.Fatalf("the response does not verify with the session key: %v", err)
	}
	if want := []byte{noSecurityLayer, 0, 0, 0}; !bytes.Equal(wt.Payload, want) {
		t.Errorf("the response selects %x, want %x (no security layer, size 0)", wt.Payload, want)
	}
	if done, resp, err := s.Next(t.Context(), nil); !done || resp != nil || err != nil {
		t.Errorf("broker's empty answer: done %v, response %x, err %v; want done", done, resp, err)
	}
}

// TestGSSAPIRefusedOffer: an offer that does not verify, or offers no
// "no security layer", ends the exchange with an error that says why.
func TestGSSAPIRefusedOffer(t *testing.T) {
	key := sessionKey(t)
	for _, tc := range []struct {
		name  string
		token []byte
		want  string
	}{
		{"other key", acceptorOffer(t, sessionKey(t), []byte{1, 0, 0x10, 0}), "does not verify with the ticket for kafka/broker-1"},
		{"integrity only", acceptorOffer(t, key, []byte{2, 0, 0x10, 0}), `offers security layers 0x2 but not "none"`},
		{"short offer", acceptorOffer(t, key, []byte{1}), "has 1 bytes, not 4"},
		{"not a wrap token", []byte("not a wrap token at all"), "security layer offer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &gssapiSession{key: key, spn: "kafka/broker-1"}
			_, _, err := s.Next(t.Context(), tc.token)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestGSSAPISettings: the mechanism's settings are checked when the
// cluster is dialled, before any network I/O, and the errors name the file
// or the principal, never the password.
func TestGSSAPISettings(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	noRealm := filepath.Join(dir, "norealm.conf")
	for path, text := range map[string]string{
		conf:    "[libdefaults]\n  default_realm = EXAMPLE.COM\n[realms]\n  EXAMPLE.COM = {\n    kdc = 127.0.0.1:88\n  }\n",
		noRealm: "[libdefaults]\n  udp_preference_limit = 1\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const pw = "s3cret-kerberos-password"
	for _, tc := range []struct {
		name string
		k    Kerberos
		want string // "" : no error
	}{
		{"password", Kerberos{Principal: "catchup", Password: config.NewSecret(pw), Krb5Conf: conf, ServiceName: "kafka"}, ""},
		{"no krb5.conf", Kerberos{Principal: "catchup", Password: config.NewSecret(pw), Krb5Conf: filepath.Join(dir, "none"), ServiceName: "kafka"}, "krb5.conf " + filepath.Join(dir, "none")},
		{"no realm", Kerberos{Principal: "catchup", Password: config.NewSecret(pw), Krb5Conf: noRealm, ServiceName: "kafka"}, `principal "catchup" has no realm`},
		{"no keys", Kerberos{Principal: "catchup", Krb5Conf: conf, ServiceName: "kafka"}, `no keytab and no password for principal "catchup"`},
		{"missing keytab", Kerberos{Principal: "catchup", KeytabFile: filepath.Join(dir, "none.keytab"), Krb5Conf: conf, ServiceName: "kafka"}, "keytab " + filepath.Join(dir, "none.keytab")},
		{"not a keytab", Kerberos{Principal: "catchup", KeytabFile: conf, Krb5Conf: conf, ServiceName: "kafka"}, "keytab " + conf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := gssapiMechanism(&tc.k)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want == "":
				m.close()
			case err == nil:
				t.Fatalf("no error, want one containing %q", tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not contain %q", err, tc.want)
			case strings.Contains(err.Error(), pw):
				t.Fatalf("error %q shows the password", err)
			}
		})
	}
}

// TestGSSAPICloseWhileLoggingIn: a cluster may be closed while kafka-go
// still dials in the background; close must not clear the Kerberos client
// under a login in flight (the race detector saw it in the broker suite),
// and a Start after close fails rather than logging in again.
func TestGSSAPICloseWhileLoggingIn(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "krb5.conf")
	// A KDC that is not there: the login fails fast, after reading the client.
	if err := os.WriteFile(conf, []byte("[libdefaults]\n  default_realm = EXAMPLE.COM\n  udp_preference_limit = 1\n"+
		"[realms]\n  EXAMPLE.COM = {\n    kdc = 127.0.0.1:1\n  }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := gssapiMechanism(&Kerberos{Principal: "catchup", Password: config.NewSecret("pw"), Krb5Conf: conf, ServiceName: "kafka"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := sasl.WithMetadata(t.Context(), &sasl.Metadata{Host: "127.0.0.1", Port: 9092})
	done := make(chan error)
	go func() {
		_, _, err := m.Start(ctx)
		done <- err
	}()
	m.close()
	if err := <-done; err == nil {
		t.Error("Start logged in against no KDC")
	}
	if _, _, err := m.Start(ctx); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Start after close: %v, want an error saying the connections are closed", err)
	}
}

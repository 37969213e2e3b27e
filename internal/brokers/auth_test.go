package brokers_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// copyTopic creates a topic of 4 partitions on both clusters, seeds 300
// records per partition, runs pipeline s (its topic is set here) to the
// end and checks that the target is an exact copy.
func copyTopic(t *testing.T, e itEnv, s spec) {
	t.Helper()
	ctx := testContext(t, 2*time.Minute)
	const partitions, per = 4, 300
	s.topic = uniqueTopic(s.name)
	createTopic(ctx, t, e.source.brokers, s.topic, partitions)
	createTopic(ctx, t, e.target.brokers, s.topic, partitions)
	seeded := makeRecords(s.topic, partitions, per, 64)
	seed(ctx, t, e.source.brokers, seeded, 16<<10)
	var logs syncBuffer
	pl := open(ctx, t, s, pipeline.Options{Log: captureLog(&logs)})
	start := time.Now()
	rep, err := pl.Engine.Run(ctx)
	pl.Close()
	requireDone(t, s.name, rep, err)
	t.Logf("%s: copied %d records in %v", s.name, partitions*per, time.Since(start).Round(time.Millisecond))
	checkExactCopy(t, "target", readAll(ctx, t, e.target.brokers, s.topic, partitions), seeded, s.source.name)
}

// TestSASLSSLCopy copies through the SASL_SSL listeners of both clusters:
// TLS verified against the test CA, SCRAM-SHA-512.
func TestSASLSSLCopy(t *testing.T) {
	e := needSASL(t)
	copyTopic(t, e, spec{
		store:  t.TempDir(),
		name:   "sasl-ssl",
		source: saslSSL("it-source", e.source),
		target: saslSSL("it-target", e.target),
	})
}

// TestWrongPassword: a wrong SCRAM password fails the run at once with an
// error that names the cluster, the mechanism and the user, and neither the
// wrong nor the right password appears in the error, the logs or the store.
func TestWrongPassword(t *testing.T) {
	e := needSASL(t)
	for _, side := range []string{"source", "target"} {
		t.Run(side, func(t *testing.T) {
			ctx := testContext(t, time.Minute)
			c, other := e.source, e.target
			if side == "target" {
				c, other = e.target, e.source
			}
			wrong := "wrong-" + randomHex(16)
			pwFile := filepath.Join(t.TempDir(), "password")
			if err := os.WriteFile(pwFile, []byte(wrong+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			bad := saslSSL("it-"+side, c)
			bad.passwordEnv, bad.passwordFile = "", pwFile
			topic := uniqueTopic("wrong-password-" + side)
			createTopic(ctx, t, e.source.brokers, topic, 1)
			createTopic(ctx, t, e.target.brokers, topic, 1)
			s := spec{store: t.TempDir(), name: "wrong-password", topic: topic}
			if side == "source" {
				s.source, s.target = bad, plaintext("it-target", other.brokers)
			} else {
				s.source, s.target = plaintext("it-source", other.brokers), bad
			}

			rep, logs, took, err := runRefused(ctx, t, s, "a wrong "+side+" password")
			msg := err.Error()
			for _, want := range []string{`"it-` + side + `"`, "SCRAM-SHA-512", `"` + c.user + `"`, "authentication"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not mention %s", msg, want)
				}
			}
			if took > 20*time.Second {
				t.Errorf("the run took %v to give up; refused credentials are not worth retrying", took)
			}
			outputs := map[string]string{
				"error":          msg,
				"error (%+v)":    fmt.Sprintf("%+v", err),
				"error (%#v)":    fmt.Sprintf("%#v", err),
				"log":            logs.String(),
				"report (%+v)":   fmt.Sprintf("%+v", rep),
				"store contents": dirContents(t, s.store),
			}
			for what, out := range outputs {
				for name, pw := range map[string]string{"wrong password": wrong, "right password": c.password()} {
					if strings.Contains(out, pw) {
						t.Errorf("the %s shows the %s", what, name)
					}
				}
			}
		})
	}
}

// runRefused runs pipeline s, which must end in an error (what says why);
// it returns the run's report, log, duration and error.
func runRefused(ctx context.Context, t *testing.T, s spec, what string) (*replicate.Report, *syncBuffer, time.Duration, error) {
	t.Helper()
	logs := new(syncBuffer)
	pl := open(ctx, t, s, pipeline.Options{Log: captureLog(logs)})
	start := time.Now()
	rep, err := pl.Engine.Run(ctx)
	took := time.Since(start)
	pl.Close()
	if err == nil {
		t.Fatalf("run with %s: no error (%s)", what, summary(rep))
	}
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
	return rep, logs, took, err
}

// TestTLSVerification: TLS certificates are verified unless the
// configuration says insecure_skip_verify. The WRONGHOST listener serves a
// certificate signed by the test CA but issued for wrong.example.
func TestTLSVerification(t *testing.T) {
	e := needSASL(t)
	wrongHost := func(c itCluster, name string) endpoint {
		ep := saslSSL(name, c)
		ep.brokers = c.wrongHost
		return ep
	}
	for _, tc := range []struct {
		name           string
		source, target endpoint
		want           []string // in the error; nil: the copy succeeds
	}{
		{
			name:   "wrong host rejected at the source",
			source: wrongHost(e.source, "it-source"), target: plaintext("it-target", e.target.brokers),
			want: []string{`"it-source"`, "failed to verify certificate", "127.0.0.1"},
		},
		{
			name:   "wrong host rejected at the target",
			source: plaintext("it-source", e.source.brokers), target: wrongHost(e.target, "it-target"),
			want: []string{`"it-target"`, "failed to verify certificate", "127.0.0.1"},
		},
		{
			name: "unknown CA rejected",
			source: func() endpoint {
				ep := saslSSL("it-source", e.source)
				ep.ca = "" // the system roots, which do not know the test CA
				return ep
			}(),
			target: plaintext("it-target", e.target.brokers),
			want:   []string{`"it-source"`, "certificate signed by unknown authority"},
		},
		{
			name: "server_name naming the certificate's host accepted",
			source: func() endpoint {
				ep := wrongHost(e.source, "it-source")
				ep.serverName = "wrong.example"
				return ep
			}(),
			target: plaintext("it-target", e.target.brokers),
		},
		{
			name: "insecure_skip_verify accepted",
			source: func() endpoint {
				ep := wrongHost(e.source, "it-source")
				ep.ca, ep.skipVerify = "", true
				return ep
			}(),
			target: plaintext("it-target", e.target.brokers),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec{store: t.TempDir(), name: "tls", source: tc.source, target: tc.target}
			if tc.want == nil {
				copyTopic(t, e, s)
				return
			}
			ctx := testContext(t, time.Minute)
			s.topic = uniqueTopic("tls")
			createTopic(ctx, t, e.source.brokers, s.topic, 1)
			createTopic(ctx, t, e.target.brokers, s.topic, 1)
			pl := open(ctx, t, s, pipeline.Options{})
			start := time.Now()
			rep, err := pl.Engine.Run(ctx)
			pl.Close()
			if err == nil {
				t.Fatalf("run succeeded (%s), want an error mentioning %q", summary(rep), tc.want)
			}
			t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// dirContents concatenates the files under dir.
func dirContents(t *testing.T, dir string) string {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Errorf("read %s: %v", dir, err)
	}
	return b.String()
}

package brokers_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// endpoint is how a pipeline reaches one cluster, written as YAML by spec.
type endpoint struct {
	name    string // cluster name (provenance, errors)
	brokers string // comma separated
	// TLS: tls block present when ca or skipVerify or serverName is set.
	tls        bool
	ca         string
	serverName string
	skipVerify bool
	// SCRAM-SHA-512 (or mechanism) when user is set; the password comes
	// from passwordEnv or passwordFile.
	user, passwordEnv, passwordFile string
	mechanism                       string
	dialTimeout                     string // dial_timeout, unless ""
	// sasl, unless "", is the sasl block's body (YAML lines indented by 8
	// spaces), for mechanisms the fields above do not cover.
	sasl string
}

func plaintext(name, brokers string) endpoint { return endpoint{name: name, brokers: brokers} }

// saslSSL is c's SASL_SSL listener with its CA and SCRAM credentials.
func saslSSL(name string, c itCluster) endpoint {
	return endpoint{name: name, brokers: c.saslSSL, tls: true, ca: c.ca, user: c.user, passwordEnv: c.passwordEnv}
}

func (e endpoint) yaml(b *strings.Builder, key string) {
	var list []string
	for _, a := range strings.Split(e.brokers, ",") {
		list = append(list, strconv.Quote(a))
	}
	fmt.Fprintf(b, "    %s:\n      name: %s\n      brokers: [%s]\n", key, e.name, strings.Join(list, ", "))
	if e.dialTimeout != "" {
		fmt.Fprintf(b, "      dial_timeout: %s\n", e.dialTimeout)
	}
	if e.tls {
		b.WriteString("      tls:\n        enabled: true\n")
		if e.ca != "" {
			fmt.Fprintf(b, "        ca_file: %q\n", e.ca)
		}
		if e.serverName != "" {
			fmt.Fprintf(b, "        server_name: %q\n", e.serverName)
		}
		if e.skipVerify {
			b.WriteString("        insecure_skip_verify: true\n")
		}
	}
	if e.mechanism == "AWS_MSK_IAM" {
		fmt.Fprintf(b, "      sasl:\n        mechanism: AWS_MSK_IAM\n        region: %s\n", "eu-west-1")
	}
	if e.sasl != "" {
		b.WriteString("      sasl:\n" + e.sasl)
	}
	if e.user != "" {
		mech := e.mechanism
		if mech == "" {
			mech = "SCRAM-SHA-512"
		}
		fmt.Fprintf(b, "      sasl:\n        mechanism: %s\n        username: %q\n", mech, e.user)
		if e.passwordEnv != "" {
			fmt.Fprintf(b, "        password_env: %s\n", e.passwordEnv)
		}
		if e.passwordFile != "" {
			fmt.Fprintf(b, "        password_file: %q\n", e.passwordFile)
		}
	}
}

// spec is one pipeline copying one topic, and its store.
type spec struct {
	store          string // a directory for the file store, or a store URL ("dynamodb://table")
	name           string
	source, target endpoint
	topic          string
	// extra holds more pipeline keys, as YAML lines indented by 4 spaces.
	extra string
}

func (s spec) yaml() string {
	var b strings.Builder
	store := s.store
	if !strings.Contains(store, "://") {
		store = "file://" + store
	}
	fmt.Fprintf(&b, "store: %q\npipelines:\n  - name: %s\n", store, s.name)
	s.source.yaml(&b, "source")
	s.target.yaml(&b, "target")
	fmt.Fprintf(&b, "    topics:\n      include: [%q]\n", regexp.QuoteMeta(s.topic))
	b.WriteString(s.extra)
	return b.String()
}

// open parses s as catchup does a configuration file and opens the
// pipeline; the caller closes it.
func open(ctx context.Context, t *testing.T, s spec, o pipeline.Options) *pipeline.Pipeline {
	t.Helper()
	y := s.yaml()
	f, err := config.Parse([]byte(y), "it.yaml")
	if err != nil {
		t.Fatalf("config:\n%s\n%v", y, err)
	}
	pl, err := pipeline.Open(ctx, f, &f.Pipelines[0], o)
	if err != nil {
		t.Fatalf("open pipeline %s: %v", s.name, err)
	}
	return pl
}

// syncBuffer is a bytes.Buffer for a slog handler used by many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// captureLog returns a debug-level logger writing text and JSON to buf.
func captureLog(buf *syncBuffer) *slog.Logger {
	o := &slog.HandlerOptions{Level: slog.LevelDebug}
	return slog.New(multiHandler{slog.NewTextHandler(buf, o), slog.NewJSONHandler(buf, o)})
}

type multiHandler []slog.Handler

func (m multiHandler) Enabled(ctx context.Context, l slog.Level) bool { return m[0].Enabled(ctx, l) }

func (m multiHandler) Handle(ctx context.Context, r slog.Record) error {
	for _, h := range m {
		if err := h.Handle(ctx, r.Clone()); err != nil {
			return err
		}
	}
	return nil
}

func (m multiHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(multiHandler, len(m))
	for i, h := range m {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (m multiHandler) WithGroup(g string) slog.Handler {
	out := make(multiHandler, len(m))
	for i, h := range m {
		out[i] = h.WithGroup(g)
	}
	return out
}

// summary counts the partitions of rep by status: "done=6 failed=2".
func summary(rep *replicate.Report) string {
	if rep == nil {
		return "no report"
	}
	n := map[replicate.Status]int{}
	for _, p := range rep.Partitions {
		n[p.Status]++
	}
	var s []string
	for st, c := range n {
		s = append(s, fmt.Sprintf("%s=%d", st, c))
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// requireDone fails the test unless every partition of rep is done.
func requireDone(t *testing.T, what string, rep *replicate.Report, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, p := range rep.Partitions {
		if p.Status != replicate.StatusDone {
			t.Errorf("%s: %s: status %s, next %d of [%d, %d): %v", what, p.Partition, p.Status, p.Next, p.From, p.To, p.Err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreCompiled leaves the compiled patterns out of comparisons; the
// Topics.Match tests cover them.
var ignoreCompiled = cmpopts.IgnoreUnexported(Topics{}, SASL{})

// problems returns the *Errors joined in err.
func problems(t *testing.T, err error) []*Error {
	t.Helper()
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]*Error, 0, len(errs))
	for _, e := range errs {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Fatalf("error %q (%T) is not a *config.Error", e, e)
		}
		out = append(out, ce)
	}
	return out
}

func TestLoadSample(t *testing.T) {
	msk := Cluster{
		Name: "msk-dr",
		Brokers: []string{
			"b-1.dr.kafka.us-east-1.amazonaws.com:9098",
			"b-2.dr.kafka.us-east-1.amazonaws.com:9098",
		},
		ClientID:    "catchup",
		TLS:         &TLS{Enabled: ptr(true)},
		SASL:        &SASL{Mechanism: "AWS_MSK_IAM"},
		DialTimeout: 10 * time.Second,
	}
	mskDefaultName := msk
	mskDefaultName.Name = "target"
	want := &File{
		Store: "dynamodb://catchup-checkpoints",
		Pipelines: []Pipeline{
			{
				Name: "orders-dr",
				Source: Cluster{
					Name:        "onprem",
					Brokers:     []string{"kafka-1.corp.example.com:9093", "kafka-2.corp.example.com:9093"},
					ClientID:    "catchup-orders-dr",
					TLS:         &TLS{Enabled: ptr(true), ServerName: "kafka.corp.example.com"},
					SASL:        &SASL{Mechanism: "SCRAM-SHA-512", Username: "replicator", PasswordEnv: "CATCHUP_ONPREM_PASSWORD"},
					DialTimeout: 10 * time.Second,
				},
				Target: msk,
				Topics: Topics{
					Include: []string{`orders`, `payments\..*`},
					Exclude: []string{`payments\.test\..*`},
				},
				Start:        "earliest",
				StartOffsets: map[string]map[int32]int64{"orders": {0: 1200, 3: 980}},
				Window:       Window{MaxRecords: 5000000, MaxBytes: 2000000000, MaxDuration: 12 * time.Minute},
				Producer: Producer{
					Acks: "all", Compression: "zstd", BatchRecords: 10000, BatchBytes: 1000000,
					Retries: 10, RetryBackoff: 100 * time.Millisecond, Timeout: 30 * time.Second,
					Idempotent: ptr(true),
				},
				Isolation:      "read_committed",
				OnGap:          "fail",
				TargetTopic:    "{topic}",
				LoopPrevention: ptr(true),
				Provenance:     ptr(true),
				CommitInterval: 30 * time.Second,
				Parallelism:    8,
				FetchBytes:     1 << 20,
				LeaseDuration:  20 * time.Minute,
				TakeoverSettle: time.Second, ReplicationWait: time.Minute,
				// replication_factor, with its default (create_topics is false)
				ReplicationFactor:  -1,
				ConfigSyncInterval: 10 * time.Minute,
				ACLSyncInterval:    10 * time.Minute,
			},
			{
				Name:   "audit-backfill",
				Source: Cluster{Name: "source", Brokers: []string{"kafka-1.corp.example.com:9092"}, ClientID: "catchup", DialTimeout: 10 * time.Second},
				Target: mskDefaultName,
				Topics: Topics{Include: []string{`audit\..*`}},
				Start:  "earliest",
				Producer: Producer{
					Acks: "all", Compression: "none", BatchRecords: 10000, BatchBytes: 1000000,
					Retries: 10, RetryBackoff: 100 * time.Millisecond, Timeout: 30 * time.Second,
				},
				Isolation:      "read_committed",
				OnGap:          "fail",
				TargetTopic:    "{topic}",
				LoopPrevention: ptr(true),
				Provenance:     ptr(true),
				CommitInterval: 30 * time.Second, // the DynamoDB default
				Parallelism:    8,
				FetchBytes:     1 << 20,
				LeaseDuration:  20 * time.Minute,
				TakeoverSettle: time.Second, ReplicationWait: time.Minute,
				// replication_factor, with its default (create_topics is false)
				ReplicationFactor:  -1,
				ConfigSyncInterval: 10 * time.Minute,
				ACLSyncInterval:    10 * time.Minute,
			},
		},
	}
	got, err := Load("testdata/pipelines.yaml")
	if err != nil {
		t.Fatalf("Load(testdata/pipelines.yaml): %v", err)
	}
	if diff := cmp.Diff(want, got, ignoreCompiled); diff != "" {
		t.Errorf("Load(testdata/pipelines.yaml) mismatch (-want +got):\n%s", diff)
	}
	if !got.Pipelines[0].Topics.Match("payments.eu") || got.Pipelines[0].Topics.Match("payments.test.eu") {
		t.Errorf("Load(testdata/pipelines.yaml): topic patterns not compiled as written")
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/no-such-file.yaml")
	if err == nil || !strings.Contains(err.Error(), "testdata/no-such-file.yaml") {
		t.Errorf("Load(missing) = %v, want an error naming the file", err)
	}
}

// minimal is the smallest valid configuration.
const minimal = `
pipelines:
  - name: orders-dr
    source:
      brokers: [src:9092]
    target:
      brokers: [dst:9092]
    topics:
      include: [orders]
`

func TestParseDefaults(t *testing.T) {
	want := &File{
		Store: "file://.catchup",
		Pipelines: []Pipeline{{
			Name:   "orders-dr",
			Source: Cluster{Name: "source", Brokers: []string{"src:9092"}, ClientID: "catchup", DialTimeout: 10 * time.Second},
			Target: Cluster{Name: "target", Brokers: []string{"dst:9092"}, ClientID: "catchup", DialTimeout: 10 * time.Second},
			Topics: Topics{Include: []string{"orders"}},
			Start:  "earliest",
			Producer: Producer{
				Acks: "all", Compression: "none", BatchRecords: 10000, BatchBytes: 1000000,
				Retries: 10, RetryBackoff: 100 * time.Millisecond, Timeout: 30 * time.Second,
			},
			Isolation:      "read_committed",
			OnGap:          "fail",
			TargetTopic:    "{topic}",
			LoopPrevention: ptr(true),
			Provenance:     ptr(true),
			CommitInterval: 5 * time.Second, // the file store default
			Parallelism:    8,
			FetchBytes:     1048576,
			LeaseDuration:  20 * time.Minute,
			TakeoverSettle: time.Second, ReplicationWait: time.Minute,
			// replication_factor, with its default (create_topics is false)
			ReplicationFactor:  -1,
			ConfigSyncInterval: 10 * time.Minute,
			ACLSyncInterval:    10 * time.Minute,
		}},
	}
	got, err := Parse([]byte(minimal), "minimal.yaml")
	if err != nil {
		t.Fatalf("Parse(minimal): %v", err)
	}
	if diff := cmp.Diff(want, got, ignoreCompiled); diff != "" {
		t.Errorf("Parse(minimal) mismatch (-want +got):\n%s", diff)
	}
}

// TestParseExplicitValues checks that a key written with a zero value keeps
// it instead of taking the default, and other spellings decode as expected.
func TestParseExplicitValues(t *testing.T) {
	tests := []struct {
		name  string
		extra string // appended to the pipeline in minimal
		get   func(p *Pipeline) any
		want  any
	}{
		{"retries 0 stays 0", "    producer: {retries: 0}\n", func(p *Pipeline) any { return p.Producer.Retries }, 0},
		{"provenance false", "    provenance: false\n", func(p *Pipeline) any { return p.ProvenanceEnabled() }, false},
		{"tls block turns tls on", "    source: {brokers: [src:9092], tls: {}}\n", func(p *Pipeline) any { return p.Source.TLSEnabled() }, true},
		{"tls enabled false", "    source: {brokers: [src:9092], tls: {enabled: false}}\n", func(p *Pipeline) any { return p.Source.TLSEnabled() }, false},
		{"null tls is no tls", "    source: {brokers: [src:9092], tls: }\n", func(p *Pipeline) any { return p.Source.TLSEnabled() }, false},
		{"duration syntax", "    lease_duration: 1h30m\n", func(p *Pipeline) any { return p.LeaseDuration }, 90 * time.Minute},
		{"takeover_settle 0 stays 0", "    takeover_settle: 0s\n", func(p *Pipeline) any { return p.TakeoverSettle }, time.Duration(0)},
		{"replication_wait 0 stays 0", "    replication_wait: 0s\n", func(p *Pipeline) any { return p.ReplicationWait }, time.Duration(0)},
		{"flow host:port in flow mapping", "    source: {brokers: [a.example.com:9092, b:9093]}\n",
			func(p *Pipeline) any { return p.Source.Brokers }, []string{"a.example.com:9092", "b:9093"}},
		{"timestamp start", "    start: 2024-05-01T00:00:00Z\n", func(p *Pipeline) any { return p.Start }, "2024-05-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(minimal, "    source:\n      brokers: [src:9092]\n", "", 1)
			if !strings.Contains(tt.extra, "source:") {
				src += "    source: {brokers: [src:9092]}\n"
			}
			src += tt.extra
			f, err := Parse([]byte(src), "t.yaml")
			if err != nil {
				t.Fatalf("Parse:\n%s\nerror: %v", src, err)
			}
			if diff := cmp.Diff(tt.want, tt.get(&f.Pipelines[0])); diff != "" {
				t.Errorf("Parse:\n%s\nmismatch (-want +got):\n%s", src, diff)
			}
		})
	}
}

func TestParseUnknownKeys(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want *Error
	}{
		{
			name: "top level",
			src:  "stor: file://x\n" + minimal,
			want: &Error{File: "t.yaml", Line: 1, Column: 1, Msg: `unknown key "stor" (did you mean "store"?)`},
		},
		{
			name: "pipeline",
			src:  minimal + "    paralellism: 4\n",
			want: &Error{File: "t.yaml", Line: 10, Column: 5, Pipeline: "pipelines[0] (orders-dr)",
				Msg: `unknown key "paralellism" (did you mean "parallelism"?)`},
		},
		{
			name: "source.tls",
			src:  strings.Replace(minimal, "[src:9092]\n", "[src:9092]\n      tls:\n        ca_fle: ca.pem\n", 1),
			want: &Error{File: "t.yaml", Line: 7, Column: 9, Pipeline: "pipelines[0] (orders-dr)", Field: "source.tls",
				Msg: `unknown key "ca_fle" (did you mean "ca_file"?)`},
		},
		{
			name: "producer",
			src:  minimal + "    producer:\n      acks: all\n      compresion: zstd\n",
			want: &Error{File: "t.yaml", Line: 12, Column: 7, Pipeline: "pipelines[0] (orders-dr)", Field: "producer",
				Msg: `unknown key "compresion" (did you mean "compression"?)`},
		},
		{
			name: "camel case",
			src:  minimal + "    window: {maxRecords: 5}\n",
			want: &Error{File: "t.yaml", Line: 10, Column: 14, Pipeline: "pipelines[0] (orders-dr)", Field: "window",
				Msg: `unknown key "maxRecords" (did you mean "max_records"?)`},
		},
		{
			name: "misplaced",
			src:  minimal + "    acks: all\n",
			want: &Error{File: "t.yaml", Line: 10, Column: 5, Pipeline: "pipelines[0] (orders-dr)",
				Msg: `unknown key "acks" here (it belongs in producer)`},
		},
		{
			name: "misplaced typo",
			src:  minimal + "    producer: {max_recods: 5}\n",
			want: &Error{File: "t.yaml", Line: 10, Column: 16, Pipeline: "pipelines[0] (orders-dr)", Field: "producer",
				Msg: `unknown key "max_recods" (did you mean "max_records"? it belongs in window)`},
		},
		{
			name: "nothing near",
			src:  minimal + "    window: {zzz: 5}\n",
			want: &Error{File: "t.yaml", Line: 10, Column: 14, Pipeline: "pipelines[0] (orders-dr)", Field: "window",
				Msg: `unknown key "zzz" (valid keys: max_records, max_bytes, max_duration)`},
		},
		{
			name: "inline password",
			src: strings.Replace(minimal, "[dst:9092]\n",
				"[dst:9092]\n      sasl:\n        mechanism: PLAIN\n        username: u\n        password_env: P\n        password: hunter2\n", 1),
			want: &Error{File: "t.yaml", Line: 12, Column: 9, Pipeline: "pipelines[0] (orders-dr)", Field: "target.sasl",
				Msg: `inline "password" is not allowed: passwords are never written in the config; ` +
					"set password_env to the name of an environment variable that holds it, password_file to a file that holds it, " +
					"or password_secret_arn to an AWS Secrets Manager secret"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "t.yaml")
			got := problems(t, err)
			if diff := cmp.Diff([]*Error{tt.want}, got); diff != "" {
				t.Errorf("Parse:\n%s\nmismatch (-want +got):\n%s", tt.src, diff)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("Parse error %q shows the inline password", err)
			}
		})
	}
}

func TestParseReportsAllProblems(t *testing.T) {
	src := `stor: x
pipelines:
  - name: orders dr
    source:
      brokers: []
      tsl: {}
    target:
      brokers: [dst]
    topics:
      include: ["(?!test).*"]
    producer:
      acks: none
      batch_bytes: 2000000
      timeout: 30
    isolation: serializable
  - name: second
    source: {brokers: [src:9092]}
    target: {brokers: [dst:9092]}
    topics: {include: [x]}
    on_gap: ignore
`
	wantLines := []int{1, 3, 5, 6, 8, 10, 12, 13, 14, 15, 20}
	_, err := Parse([]byte(src), "bad.yaml")
	got := problems(t, err)
	var lines []int
	for _, e := range got {
		lines = append(lines, e.Line)
	}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("Parse(bad.yaml) found %d problems, want %d; lines mismatch (-want +got):\n%s\nerror:\n%v", len(got), len(wantLines), diff, err)
	}
}

func TestParseValueErrors(t *testing.T) {
	tests := []struct {
		name  string
		extra string
		want  *Error
	}{
		{"duration without unit", "    lease_duration: 30\n",
			&Error{Line: 10, Column: 21, Field: "lease_duration", Msg: `want a duration such as "500ms", "30s", "5m" or "1h30m", got "30"`}},
		{"bad duration unit", "    commit_interval: 5x\n",
			&Error{Line: 10, Column: 22, Field: "commit_interval", Msg: `want a duration such as "500ms", "30s", "5m" or "1h30m", got "5x"`}},
		{"int from text", "    parallelism: many\n",
			&Error{Line: 10, Column: 18, Field: "parallelism", Msg: `want an integer, got "many"`}},
		{"int32 overflow", "    fetch_bytes: 99999999999\n",
			&Error{Line: 10, Column: 18, Field: "fetch_bytes", Msg: `want an integer from -2147483648 to 2147483647, got "99999999999"`}},
		{"bool", "    provenance: yes\n",
			&Error{Line: 10, Column: 17, Field: "provenance", Msg: `want true or false, got "yes"`}},
		{"list wanted", "    topics: {include: [orders], exclude: test}\n",
			&Error{Line: 8, Column: 42, Field: "topics.exclude", Msg: `want a list, got "test" (write [a, b] or one "- item" per line)`}},
		{"mapping wanted", "    window: 5\n",
			&Error{Line: 10, Column: 13, Field: "window", Msg: `want a mapping, got "5"`}},
		{"partition not a number", "    start_offsets: {orders: {p0: 5}}\n",
			&Error{Line: 10, Column: 30, Field: "start_offsets[orders][p0]", Msg: `want an integer from -2147483648 to 2147483647, got "p0"`}},
		{"unknown alias", "    window: *nope\n",
			&Error{Line: 10, Column: 13, Field: "window", Msg: `an alias (*name) refers to no anchor (&name) defined before it; quote a value that starts with '*'`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := minimal + tt.extra
			if strings.Contains(tt.extra, "topics:") {
				src = strings.Replace(minimal, "    topics:\n      include: [orders]\n", "", 1) + tt.extra
			}
			tt.want.File = "t.yaml"
			tt.want.Pipeline = "pipelines[0] (orders-dr)"
			_, err := Parse([]byte(src), "t.yaml")
			if diff := cmp.Diff([]*Error{tt.want}, problems(t, err)); diff != "" {
				t.Errorf("Parse:\n%s\nmismatch (-want +got):\n%s", src, diff)
			}
		})
	}
}

func TestParseDocumentErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want *Error
	}{
		{"empty", "", &Error{File: "t.yaml", Field: "pipelines", Msg: "no pipelines: list at least one under pipelines:"}},
		{"comment only", "# nothing\n", &Error{File: "t.yaml", Field: "pipelines", Msg: "no pipelines: list at least one under pipelines:"}},
		{"two documents", minimal + "---\n" + minimal, &Error{File: "t.yaml", Line: 10,
			Msg: `a config file holds one YAML document; remove the second "---"`}},
		{"duplicate key", "store: a\nstore: b\n", &Error{File: "t.yaml", Line: 2, Column: 1,
			Msg: `invalid YAML: mapping key "store" already defined at [1:1]`}},
		{"not a mapping", "- a\n", &Error{File: "t.yaml", Line: 1, Column: 1, Msg: "want a mapping, got a list"}},
		// The parser quotes what it stopped at: here a password written
		// inline, which the message must not repeat.
		{"a password the parser quotes", "store: {|s3cret0\n", &Error{File: "t.yaml", Line: 1, Column: 9,
			Msg: `invalid YAML: invalid header option: "…"`}},
		{"a password read as an alias", "store: *Tr0ub4dor\n", &Error{File: "t.yaml", Line: 1, Column: 8, Field: "store",
			Msg: `an alias (*name) refers to no anchor (&name) defined before it; quote a value that starts with '*'`}},
		{"a bracket the parser looked for", "store: [a, b\n", &Error{File: "t.yaml", Line: 1, Column: 8,
			Msg: `invalid YAML: sequence end token ']' not found`}},
		{"an escape the parser quotes", "store: \"pa\\qss\"\n", &Error{File: "t.yaml", Line: 1, Column: 12,
			Msg: `invalid YAML: found unknown escape character "…"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "t.yaml")
			if !slices.ContainsFunc(problems(t, err), func(e *Error) bool { return cmp.Equal(tt.want, e) }) {
				t.Errorf("Parse(%q) = %v, want among the errors %v", tt.src, err, tt.want)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{File: "p.yaml", Line: 3, Column: 5, Pipeline: "pipelines[0] (a)", Field: "producer.acks", Msg: "bad"},
			"p.yaml:3:5: pipelines[0] (a): producer.acks: bad"},
		{Error{File: "p.yaml", Msg: "bad"}, "p.yaml: bad"},
		{Error{Line: 3, Msg: "bad"}, "3: bad"},
		{Error{Field: "store", Msg: "bad"}, "store: bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"acks", "acks", 0},
		{"", "abc", 3},
		{"tsl", "tls", 1},
		{"max_recrds", "max_records", 1},
		{"kitten", "sitting", 3},
		{"héllo", "hello", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	keys := []string{"acks", "allow_data_loss", "compression", "batch_records", "batch_bytes"}
	tests := []struct {
		key    string
		want   string
		wantOK bool
	}{
		{"ack", "acks", true},
		{"Compression", "compression", true},
		{"batch-records", "batch_records", true},
		{"batchRecords", "batch_records", true},
		{"size", "", false},
	}
	for _, tt := range tests {
		got, ok := nearest(tt.key, keys)
		if ok != tt.wantOK || ok && got != tt.want {
			t.Errorf("nearest(%q) = %q, %v, want %q, %v", tt.key, got, ok, tt.want, tt.wantOK)
		}
	}
}

// TestParseNoFollowOnErrors checks that a value that does not decode is
// reported once, not again by validation as if it were empty.
func TestParseNoFollowOnErrors(t *testing.T) {
	tests := []struct {
		name   string
		source string
		want   *Error
	}{
		{"list element", "{brokers: [k: 1]}",
			&Error{Line: 8, Column: 24, Field: "source.brokers[0]", Msg: "want a string, got a mapping"}},
		{"list", "{brokers: {k: 1}}",
			&Error{Line: 8, Column: 23, Field: "source.brokers", Msg: "want a list, got a mapping (write [a, b] or one \"- item\" per line)"}},
		{"cluster", "broker:9092",
			&Error{Line: 8, Column: 13, Field: "source", Msg: "want a mapping, got \"broker:9092\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(minimal, "    source:\n      brokers: [src:9092]\n", "", 1) + "    source: " + tt.source + "\n"
			tt.want.File, tt.want.Pipeline = "t.yaml", "pipelines[0] (orders-dr)"
			_, err := Parse([]byte(src), "t.yaml")
			if diff := cmp.Diff([]*Error{tt.want}, problems(t, err)); diff != "" {
				t.Errorf("Parse:\n%s\nmismatch (-want +got):\n%s", src, diff)
			}
		})
	}
}

func TestParseWithStore(t *testing.T) {
	const pipelines = "pipelines:\n  - name: p\n    source: {brokers: [\"s:9092\"]}\n    target: {brokers: [\"t:9092\"]}\n    topics: {include: [x]}\n"
	tests := []struct {
		name, src  string
		wantStore  string
		wantCommit time.Duration
	}{
		{"store absent takes the given one", pipelines, "dynamodb://table", 30 * time.Second},
		{"store in the file wins", "store: file://dir\n" + pipelines, "file://dir", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseWithStore([]byte(tt.src), "t.yaml", "dynamodb://table")
			if err != nil {
				t.Fatalf("ParseWithStore: %v", err)
			}
			if f.Store != tt.wantStore || f.Pipelines[0].CommitInterval != tt.wantCommit {
				t.Errorf("ParseWithStore: store %q, commit_interval %s; want %q, %s", f.Store, f.Pipelines[0].CommitInterval, tt.wantStore, tt.wantCommit)
			}
		})
	}
}

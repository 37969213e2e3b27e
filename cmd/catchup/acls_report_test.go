package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/kafkago/kafkagotest"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestReportShowsACLSync pins that what ACL sync did reaches the run
// report's summary and --json, and that a failed sync gets a WARNING line
// of its own with the error (none when it succeeded).
func TestReportShowsACLSync(t *testing.T) {
	acl := catchup.ACL{Topic: "t", Principal: "User:a", Host: "*", Operation: catchup.ACLRead, Permission: catchup.ACLAllow}
	rep := &replicate.Report{Pipeline: "ab", ACLs: &replicate.ACLSync{Created: []catchup.ACL{acl}, Present: 2,
		Skipped: []replicate.SkippedACL{{ACL: acl, Reason: replicate.SkipAllowWrite}}, Error: `cluster "dst" refuses CreateAcls`}}
	var text bytes.Buffer
	printReport(&text, rep)
	for _, w := range []string{
		"; topic ACLs: 1 created, 2 already present, 1 not copied, sync FAILED (below)",
		"\nWARNING: pipeline ab: topic ACLs NOT synced to the target (the records were copied; the target's topics may lack the source's ACLs): " +
			`cluster "dst" refuses CreateAcls` + "\n",
	} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("report %q does not say %q", text.String(), w)
		}
	}
	data, err := json.Marshal(reportJSON(rep))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ACLs struct {
			Created []map[string]any `json:"created"`
			Present int              `json:"present"`
			Skipped []map[string]any `json:"skipped"`
			Error   string           `json:"error"`
		} `json:"acls"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	a := got.ACLs
	if len(a.Created) != 1 || a.Created[0]["principal"] != "User:a" || a.Created[0]["operation"] != "READ" || a.Present != 2 ||
		len(a.Skipped) != 1 || a.Skipped[0]["reason"] != replicate.SkipAllowWrite || a.Error == "" {
		t.Errorf("--json acls: %s", data)
	}
	text.Reset()
	rep.ACLs.Error = ""
	printReport(&text, rep)
	if strings.Contains(text.String(), "WARNING") || strings.Contains(text.String(), "FAILED") {
		t.Errorf("report of an ACL sync that succeeded warns: %q", text.String())
	}
}

// TestRunACLSyncFailureIsSeen runs `catchup run` with sync_acls from a
// source that authenticates with SCRAM and refuses DescribeAcls: the
// records are copied and the exit code stays 0 (the README's: every
// partition done), the report carries the WARNING line naming the cluster,
// the principal and the grant, the metrics textfile says
// catchup_acl_sync_failed 1 for the pipeline, --json gives the error in
// acls.error, and the password reaches none of the output.
func TestRunACLSyncFailureIsSeen(t *testing.T) {
	const password = "acl-Pa55word-never-shown"
	src, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, cliTopic), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-512", "replicator", password))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	src.ControlKey(int16(kmsg.DescribeACLs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		src.KeepControl()
		res := kreq.ResponseKind().(*kmsg.DescribeACLsResponse)
		res.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return res, nil, true
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.DisableClientMetrics(),
		kgo.SASL(scram.Auth{User: "replicator", Pass: password}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: cliTopic, Value: []byte("a")}).FirstErr(); err != nil {
		t.Fatalf("seed the source: %v", err)
	}
	dst := newFake(t)
	dir := t.TempDir()
	t.Setenv("CATCHUP_TEST_ACL_PASSWORD", password)
	cfg := filepath.Join(dir, "pipelines.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`store: file://%s
pipelines:
  - name: dr
    source: {name: src, brokers: [%s], sasl: {mechanism: SCRAM-SHA-512, username: replicator, password_env: CATCHUP_TEST_ACL_PASSWORD}}
    target: {name: dst, brokers: [%s]}
    topics: {include: [%s]}
    sync_acls: true
`, filepath.Join(dir, "store"), src.ListenAddrs()[0], dst.ListenAddrs()[0], cliTopic)), 0o600); err != nil {
		t.Fatal(err)
	}
	textfile := filepath.Join(dir, "catchup.prom")
	stdout, stderr := mustCLI(t, exitOK, "", "run", "-c", cfg, "--metrics-textfile", textfile)
	warning := `WARNING: pipeline dr: topic ACLs NOT synced to the target (the records were copied; the target's topics may lack the source's ACLs): ` +
		`describe source topic ACLs: cluster "src" refuses DescribeAcls to User:replicator: grant it Describe on the cluster`
	if !strings.Contains(stdout, warning) {
		t.Errorf("stdout lacks %q:\n%s", warning, stdout)
	}
	prom, err := os.ReadFile(textfile)
	if err != nil {
		t.Fatal(err)
	}
	if w := `catchup_acl_sync_failed{pipeline="dr"} 1`; !strings.Contains(string(prom), w) {
		t.Errorf("metrics textfile lacks %q:\n%s", w, prom)
	}
	// Again with --json: a new process syncs again, and says why in acls.error.
	jsonOut, jsonErr := mustCLI(t, exitOK, "", "run", "-c", cfg, "--json")
	var doc struct {
		Pipelines []struct {
			ACLs struct {
				Error string `json:"error"`
			} `json:"acls"`
		} `json:"pipelines"`
	}
	if err := json.Unmarshal([]byte(jsonOut), &doc); err != nil || len(doc.Pipelines) != 1 ||
		!strings.Contains(doc.Pipelines[0].ACLs.Error, `cluster "src" refuses DescribeAcls to User:replicator`) {
		t.Errorf("--json (%v) does not give acls.error naming the cluster and the principal:\n%s", err, jsonOut)
	}
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr, "the metrics textfile": string(prom),
		"--json's stdout": jsonOut, "--json's stderr": jsonErr} {
		if strings.Contains(out, password) {
			t.Errorf("the password reached %s: %s", name, out)
		}
	}
}

// TestRunTopicConfigSyncFailureIsSeen runs `catchup run` with create_topics
// onto a target that refuses IncrementalAlterConfigs: the records are
// copied and the exit code stays 0, the report carries the WARNING line
// with the refusal, the metrics textfile says
// catchup_topic_config_sync_failed 1, and --json gives the error in
// config_sync_error.
func TestRunTopicConfigSyncFailureIsSeen(t *testing.T) {
	e := newCLIEnv(t)
	kafkagotest.RefuseAlterConfigs(e.dst, kerr.TopicAuthorizationFailed.Code, func() bool { return true })
	cfg := editConfig(t, e, ".create-topics.yaml", func(b []byte) []byte { return append(b, "    create_topics: true\n"...) })
	textfile := filepath.Join(e.dir, "catchup.prom")
	stdout, _ := mustCLI(t, exitOK, "", "run", "-c", cfg, "--metrics-textfile", textfile)
	refused := `alter target topic configs: alter configs [message.timestamp.type] of topic ` + cliTopic + ` in cluster "cli-dst"`
	warning := "WARNING: pipeline " + cliPipeline + ": topic configs NOT synced to the target (the records were copied; " +
		"the target's topics may lack the source's configs): " + refused
	if !strings.Contains(stdout, warning) {
		t.Errorf("stdout lacks %q:\n%s", warning, stdout)
	}
	prom, err := os.ReadFile(textfile)
	if err != nil {
		t.Fatal(err)
	}
	if w := `catchup_topic_config_sync_failed{pipeline="` + cliPipeline + `"} 1`; !strings.Contains(string(prom), w) {
		t.Errorf("metrics textfile lacks %q:\n%s", w, prom)
	}
	if rep := runJSON(t, cfg); !strings.Contains(rep.ConfigSyncErr, refused) {
		t.Errorf("--json config_sync_error %q does not say %q", rep.ConfigSyncErr, refused)
	}
}

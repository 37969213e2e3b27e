package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestReportShowsACLSync pins that what ACL sync did, and why it failed,
// reach the run report's last line and --json.
func TestReportShowsACLSync(t *testing.T) {
	acl := catchup.ACL{Topic: "t", Principal: "User:a", Host: "*", Operation: catchup.ACLRead, Permission: catchup.ACLAllow}
	rep := &replicate.Report{Pipeline: "ab", ACLs: &replicate.ACLSync{Created: []catchup.ACL{acl}, Present: 2,
		Skipped: []replicate.SkippedACL{{ACL: acl, Reason: replicate.SkipAllowWrite}}, Error: `cluster "dst" refuses CreateAcls`}}
	var text bytes.Buffer
	printReport(&text, rep)
	if w := `topic ACLs: 1 created, 2 already present, 1 not copied, sync failed: cluster "dst" refuses CreateAcls`; !strings.Contains(text.String(), w) {
		t.Errorf("report %q does not say %q", text.String(), w)
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
}

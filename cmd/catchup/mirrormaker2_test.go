package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-catchup/catchup/internal/config"
)

// TestMirrorMaker2CLI: the exit status and streams of catchup
// mirrormaker2 on the three MirrorMaker 2 configurations of
// internal/mirrormaker/testdata/mm2 and on a refused one.
func TestMirrorMaker2CLI(t *testing.T) {
	t.Chdir("../../internal/mirrormaker")
	bad := filepath.Join(t.TempDir(), "bad.properties")
	if err := os.WriteFile(bad, []byte("clusters = a, b\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b:9092\n"+
		"a->b.enabled = true\nreplication.policy.class = com.example.PrefixPolicy\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args      []string
		code      int
		pipelines []string // parsed from stdout when code is 0
		stderr    string
	}{
		{[]string{"testdata/mm2/dedicated.properties"}, 0, []string{"primary-to-backup"}, "dedicated.properties:15: primary->backup.enabled: mapped"},
		{[]string{"testdata/mm2/connect.json"}, 0, []string{"us-east-to-eu-west"}, "connect.json:19: config.replication.policy.class: mapped"},
		{[]string{"testdata/mm2/strimzi.yaml"}, 2, nil, "strimzi.yaml:27: spec.clusters[1].tls.trustedCertificates[0].secretName: invalid"},
		{[]string{bad}, 2, nil, "bad.properties:5: replication.policy.class: refused"},
		{[]string{"testdata/mm2/connect.json", "--take-over"}, 2, nil, "--take-over of a Connect connector needs --offsets-topic"},
		{[]string{"testdata/mm2/missing.properties"}, 2, nil, "no such file"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := mmCLI(t, append([]string{"mirrormaker2", "--print-config"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, want %d; stderr should say %q:\n%s", code, tt.code, tt.stderr, stderr)
			}
			if code != 0 {
				return
			}
			f, err := config.Parse([]byte(stdout), "stdout")
			if err != nil {
				t.Fatalf("the printed YAML does not parse: %v\n%s", err, stdout)
			}
			var names []string
			for _, p := range f.Pipelines {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.pipelines, ",") {
				t.Errorf("pipelines %v, want %v", names, tt.pipelines)
			}
		})
	}
}

package config

import (
	"os"
	"testing"
)

// FuzzParse parses arbitrary YAML: Parse never panics, and a File it
// accepts comes with at least one pipeline and nothing left unset that the
// defaults promise to set.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/pipelines.yaml", "testdata/multi.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("pipelines: []\n"))
	f.Add([]byte("pipelines:\n  - name: a\n    source: {brokers: [x:1]}\n    target: {brokers: [y:1]}\n    topics: [t]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data, "fuzz.yaml")
		if err != nil {
			if file != nil {
				t.Errorf("Parse failed (%v) but returned a File", err)
			}
			return
		}
		if file == nil || len(file.Pipelines) == 0 {
			t.Fatalf("Parse accepted %q without a pipeline", data)
		}
		for i, p := range file.Pipelines {
			if p.Name == "" || len(p.Source.Brokers) == 0 || len(p.Target.Brokers) == 0 {
				t.Errorf("pipeline %d accepted without a name or brokers: %+v", i, p)
			}
		}
	})
}

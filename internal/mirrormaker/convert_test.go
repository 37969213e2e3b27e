package mirrormaker

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The CLI's tests (cmd/catchup/mirrormaker_test.go) check whole conversions
// of the files in testdata through --print-config, message by
// message; these check the parts.

// convert runs Convert on one consumer and one producer config
// given as text, selecting every topic.
func convert(t *testing.T, consumer, producer string, fl Flags) (*Migration, error) {
	t.Helper()
	if fl.Whitelist == "" {
		fl.Whitelist = ".*"
	}
	m, err := Convert([]File{{Name: "c.properties", Data: []byte(consumer)}},
		File{Name: "p.properties", Data: []byte(producer)}, fl)
	if m == nil {
		t.Fatalf("Convert returned a nil Migration (err %v)", err)
	}
	return m, err
}

// noticesOf returns "kind: msg" of every notice about key.
func noticesOf(m *Migration, key string) []string {
	var out []string
	for _, n := range m.Notices {
		if n.Key == key {
			out = append(out, string(n.Kind)+": "+n.Msg)
		}
	}
	return out
}

const (
	plainConsumer = "bootstrap.servers=src:9092\ngroup.id=g\n"
	plainProducer = "bootstrap.servers=dst:9092\n"
)

func TestClusterStem(t *testing.T) {
	tests := []struct{ path, role, def, want string }{
		{"conf/sourceCluster1Consumer.config", "consumer", "source", "sourceCluster1"},
		{"targetClusterProducer.config", "producer", "target", "targetCluster"},
		{"east-consumer.properties", "consumer", "source", "east"},
		{"consumer.properties", "consumer", "source", "source"},
		{"my cluster.conf", "consumer", "source", "my-cluster"},
	}
	for _, tt := range tests {
		if got := clusterStem(tt.path, tt.role, tt.def); got != tt.want {
			t.Errorf("clusterStem(%q, %q) = %q, want %q", tt.path, tt.role, got, tt.want)
		}
	}
}

func TestPipelineNames(t *testing.T) {
	files := []File{
		{Name: "a/east.consumer.config", Data: []byte("bootstrap.servers=e:9092\ngroup.id=mirror\n")},
		{Name: "b/east.consumer.config", Data: []byte("bootstrap.servers=w:9092\ngroup.id=mirror\n")},
		{Name: "west.properties", Data: []byte("bootstrap.servers=w2:9092\ngroup.id=my group/1\n")},
	}
	m, err := Convert(files, File{Name: "east.producer.config", Data: []byte(plainProducer)}, Flags{Whitelist: ".*"})
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]string
	for _, p := range m.File.Pipelines {
		got = append(got, [3]string{p.Name, p.Source.Name, p.Target.Name})
	}
	want := [][3]string{{"mirror", "east", "east-3"}, {"mirror.east-2", "east-2", "east-3"}, {"my-group-1", "west", "east-3"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

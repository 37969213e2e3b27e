package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/kafka-catchup/catchup/internal/config"
)

// TestDeployConfigMapParses checks that the configuration the Kubernetes
// example ships (deploy/kubernetes/configmap.yaml, data pipelines.yaml)
// is one catchup accepts, strictly, as `catchup run -c` would read it.
func TestDeployConfigMapParses(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "kubernetes", "configmap.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	text, ok := cm.Data["pipelines.yaml"]
	if !ok {
		t.Fatalf("%s: no data key pipelines.yaml", path)
	}
	t.Setenv("KAFKA_PASSWORD", "x")
	f, err := config.Parse([]byte(text), path+":pipelines.yaml")
	if err != nil {
		t.Fatalf("the ConfigMap's configuration: %v", err)
	}
	if len(f.Pipelines) == 0 {
		t.Errorf("the ConfigMap's configuration has no pipeline")
	}
}

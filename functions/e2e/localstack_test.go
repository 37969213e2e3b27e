package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestLocalStackFiles checks what can be checked of localstack/ without
// Docker: the compose file parses and runs LocalStack with the services
// the stack uses next to two Kafka brokers, and the scripts pass bash -n
// and, where it is installed, shellcheck.
func TestLocalStackFiles(t *testing.T) {
	dir := filepath.Join("..", "..", "localstack")
	data, err := os.ReadFile(filepath.Join(dir, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	ls, ok := compose.Services["localstack"]
	if !ok || !strings.HasPrefix(ls.Image, "localstack/localstack:") {
		t.Fatalf("no localstack service with a pinned localstack/localstack image")
	}
	services := strings.Split(ls.Environment["SERVICES"], ",")
	for _, s := range []string{"dynamodb", "lambda", "scheduler", "secretsmanager", "ssm", "cloudwatch"} {
		if !slices.Contains(services, s) {
			t.Errorf("LocalStack SERVICES %v lack %s", services, s)
		}
	}
	if !slices.ContainsFunc(ls.Volumes, func(v string) bool { return strings.HasSuffix(v, ":/etc/localstack/init/ready.d:ro") }) {
		t.Errorf("the init hooks are not mounted at /etc/localstack/init/ready.d")
	}
	for _, name := range []string{"kafka-source", "kafka-target"} {
		if img := compose.Services[name].Image; !strings.HasPrefix(img, "apache/kafka:") {
			t.Errorf("service %s: image %q, want apache/kafka", name, img)
		}
	}

	scripts, _ := filepath.Glob(filepath.Join(dir, "*.sh"))
	hooks, _ := filepath.Glob(filepath.Join(dir, "init", "ready.d", "*.sh"))
	if len(hooks) == 0 {
		t.Fatalf("no init hook in localstack/init/ready.d")
	}
	for _, s := range append(scripts, hooks...) {
		if out, err := exec.Command("bash", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", s, err, out)
		}
		if info, err := os.Stat(s); err != nil || info.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", s)
		}
	}
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Logf("shellcheck is not installed: skipped (make lint-aws runs it where it is)")
		return
	}
	if out, err := exec.Command("shellcheck", append([]string{"-x"}, append(scripts, hooks...)...)...).CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

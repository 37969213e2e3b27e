package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// decodeStrict decodes the manifest file into obj, an unknown or
// duplicated field being an error, and checks its kind.
func decodeStrict(t *testing.T, file string, obj any, kind string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("kubernetes", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		t.Fatal(err)
	}
	if tm.Kind != kind {
		t.Fatalf("%s: kind %q, want %s", file, tm.Kind, kind)
	}
}

// TestKubernetesManifests decodes every manifest strictly into the
// Kubernetes API types and checks that they fit together: the CronJob never
// runs twice at once, reads the ConfigMap's file and the Secret's key that
// exist, mounts the claim of pvc.yaml where the ConfigMap's file store
// points, runs as non-root, and requests at least the peak RSS
// docs/benchmarks.md measured at the defaults (69 MiB).
func TestKubernetesManifests(t *testing.T) {
	entries, err := os.ReadDir("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	var cj batchv1.CronJob
	var cm corev1.ConfigMap
	var sec corev1.Secret
	var pvc corev1.PersistentVolumeClaim
	want := map[string]struct {
		obj  any
		kind string
	}{
		"cronjob.yaml": {&cj, "CronJob"}, "configmap.yaml": {&cm, "ConfigMap"},
		"secret.yaml": {&sec, "Secret"}, "pvc.yaml": {&pvc, "PersistentVolumeClaim"},
		"prometheusrule.yaml": {&prometheusRule{}, "PrometheusRule"},
		"deployment.yaml":     {&appsv1.Deployment{}, "Deployment"}, "service.yaml": {&corev1.Service{}, "Service"},
		"indexed-job.yaml": {&batchv1.Job{}, "Job"}, "configmap-dynamodb.yaml": {&corev1.ConfigMap{}, "ConfigMap"},
	}
	for _, e := range entries {
		w, ok := want[e.Name()]
		if !ok {
			t.Errorf("kubernetes/%s: no test decodes it", e.Name())
			continue
		}
		decodeStrict(t, e.Name(), w.obj, w.kind)
	}
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("concurrencyPolicy %q, want Forbid: two runs would contend for the same leases", cj.Spec.ConcurrencyPolicy)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("the pod does not require a non-root user")
	}
	if mem := c.Resources.Requests.Memory(); mem.Cmp(resource.MustParse("69Mi")) < 0 {
		t.Errorf("memory request %s, below the measured peak RSS of 69 MiB", mem)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
		t.Errorf("no memory limit")
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	var configPath, storePath string
	for _, m := range c.VolumeMounts {
		v := volumes[m.Name]
		switch {
		case v.ConfigMap != nil:
			if v.ConfigMap.Name != cm.Name {
				t.Errorf("volume %s: ConfigMap %q, want %q", v.Name, v.ConfigMap.Name, cm.Name)
			}
			configPath = m.MountPath
		case v.PersistentVolumeClaim != nil:
			if v.PersistentVolumeClaim.ClaimName != pvc.Name {
				t.Errorf("volume %s: claim %q, want %q", v.Name, v.PersistentVolumeClaim.ClaimName, pvc.Name)
			}
			storePath = m.MountPath
		default:
			t.Errorf("mount %s: volume %q is not defined", m.MountPath, m.Name)
		}
	}
	var file string
	for i, a := range c.Args {
		if a == "-c" && i+1 < len(c.Args) {
			file = c.Args[i+1]
		}
	}
	key, ok := strings.CutPrefix(file, configPath+"/")
	if _, found := cm.Data[key]; !ok || !found {
		t.Errorf("catchup -c %q: not a file of the ConfigMap mounted at %s (keys %v)", file, configPath, keysOf(cm.Data))
	}
	if !strings.Contains(cm.Data[key], "store: file://"+storePath+"\n") {
		t.Errorf("the ConfigMap's store is not the claim mounted at %s", storePath)
	}
	for _, e := range c.Env {
		if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
			if r.SecretKeyRef.Name != sec.Name || sec.StringData[r.SecretKeyRef.Key] == "" {
				t.Errorf("env %s: secret %s key %s is not in secret.yaml", e.Name, r.SecretKeyRef.Name, r.SecretKeyRef.Key)
			}
			if !strings.Contains(cm.Data[key], "password_env: "+e.Name) {
				t.Errorf("env %s: the configuration does not read it (password_env)", e.Name)
			}
		}
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSystemdUnits checks the service and the timer with systemd-analyze
// verify where systemd is installed (it reports unknown keys and bad
// values), and in any case parses them: every line a section header, a
// comment or a key=value of a known key of its section, the ExecStart a
// catchup run of the pipelines file, and the timer starting the service.
func TestSystemdUnits(t *testing.T) {
	known := map[string]map[string]bool{
		"Unit": set("Description", "Documentation", "Wants", "After"),
		"Service": set("Type", "DynamicUser", "StateDirectory", "WorkingDirectory", "EnvironmentFile", "LoadCredential", "ExecStart",
			"TimeoutStartSec", "MemoryMax", "NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp",
			"PrivateDevices", "ProtectKernelTunables", "ProtectControlGroups", "RestrictAddressFamilies"),
		"Timer":   set("OnCalendar", "Persistent", "Unit"),
		"Install": set("WantedBy"),
	}
	units := map[string]map[string]map[string]string{}
	for _, f := range []string{"catchup.service", "catchup.timer"} {
		units[f] = parseUnit(t, filepath.Join("systemd", f), known)
	}
	svc, tmr := units["catchup.service"], units["catchup.timer"]
	start := svc["Service"]["ExecStart"]
	if !strings.HasPrefix(start, "/usr/local/bin/catchup run -c ") {
		t.Errorf("ExecStart %q, want /usr/local/bin/catchup run -c FILE", start)
	}
	// A dynamic user owns no file on the machine: it reads the
	// configuration root installed 0640 only as a credential of the unit.
	if svc["Service"]["DynamicUser"] == "yes" {
		file, _, _ := strings.Cut(strings.TrimPrefix(start, "/usr/local/bin/catchup run -c "), " ")
		id, _, _ := strings.Cut(svc["Service"]["LoadCredential"], ":")
		if id == "" || file != "${CREDENTIALS_DIRECTORY}/"+id {
			t.Errorf("ExecStart reads %s and LoadCredential is %q: under DynamicUser the configuration must be read as a credential, -c ${CREDENTIALS_DIRECTORY}/ID with LoadCredential=ID:PATH",
				file, svc["Service"]["LoadCredential"])
		}
	}
	if svc["Service"]["Type"] != "oneshot" {
		t.Errorf("Type %q, want oneshot: the timer must not start a second run while one is active", svc["Service"]["Type"])
	}
	if tmr["Timer"]["OnCalendar"] == "" || tmr["Install"]["WantedBy"] != "timers.target" {
		t.Errorf("timer %v: want OnCalendar and WantedBy=timers.target", tmr)
	}
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Logf("systemd-analyze not installed: parsed only")
		return
	}
	// verify needs ExecStart's binary to exist: point it at a stand-in.
	dir := t.TempDir()
	for f := range units {
		data, err := os.ReadFile(filepath.Join("systemd", f))
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.ReplaceAll(string(data), "/usr/local/bin/catchup", "/bin/true"))
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(sa, "verify", filepath.Join(dir, "catchup.service"), filepath.Join(dir, "catchup.timer")).CombinedOutput()
	// Lines about the machine's own units (in a container, no systemd is running) are not ours.
	var ours []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "catchup.") {
			ours = append(ours, l)
		}
	}
	if err != nil || len(ours) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func set(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// parseUnit reads a systemd unit file into section -> key -> value,
// failing on an unknown section or key and on a line that is none of a
// section header, a comment, a blank or key=value.
func parseUnit(t *testing.T, path string, known map[string]map[string]bool) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			section = l[1 : len(l)-1]
			if known[section] == nil {
				t.Errorf("%s:%d: unknown section [%s]", path, n, section)
			}
			out[section] = map[string]string{}
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok || section == "" {
				t.Errorf("%s:%d: not key=value in a section: %q", path, n, l)
				continue
			}
			if !known[section][k] {
				t.Errorf("%s:%d: unknown key %s in [%s]", path, n, k, section)
			}
			out[section][k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

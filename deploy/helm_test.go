package deploy

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// serviceMonitor is the Prometheus Operator's ServiceMonitor, the fields
// the chart uses.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// helm returns the helm binary: $HELM (make test-deploy builds a pinned
// one), else helm on the PATH; without it the test skips, or fails under
// CATCHUP_REQUIRE_HELM=1.
func helm(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	h, err := exec.LookPath("helm")
	if err != nil {
		if os.Getenv("CATCHUP_REQUIRE_HELM") == "1" {
			t.Fatalf("helm not installed (make test-deploy builds it): %v", err)
		}
		t.Skipf("helm not installed (make test-deploy builds it): %v", err)
	}
	return h
}

// TestHelmChart: helm lint passes for each mode of the chart, and what helm
// template renders decodes strictly into the Kubernetes types: the
// CronJob; the Deployment of run --every with probes on its metrics port,
// its Service and ServiceMonitor; the Indexed Job whose --shards is its
// completions; the ServiceAccount with its IRSA annotation, in all.
func TestHelmChart(t *testing.T) {
	h := helm(t)
	const chart = "helm/catchup"
	const role = "arn:aws:iam::123456789012:role/catchup"
	for _, tc := range []struct {
		mode  string
		kinds []string
	}{
		{"cronjob", []string{"ConfigMap", "CronJob", "ServiceAccount"}},
		{"every", []string{"ConfigMap", "Deployment", "Service", "ServiceAccount", "ServiceMonitor"}},
		{"indexed", []string{"ConfigMap", "Job", "ServiceAccount"}},
	} {
		sets := []string{"--set", "mode=" + tc.mode, "--set", "serviceMonitor.enabled=true",
			"--set-string", "serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=" + role}
		if out, err := exec.Command(h, append([]string{"lint", "--strict", chart}, sets...)...).CombinedOutput(); err != nil {
			t.Errorf("%s: helm lint: %v\n%s", tc.mode, err, out)
		}
		out, err := exec.Command(h, append([]string{"template", "rel", chart}, sets...)...).Output()
		if err != nil {
			t.Fatalf("%s: helm template: %v", tc.mode, err)
		}
		var kinds []string
		for _, doc := range strings.Split(string(out), "\n---\n") {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil || tm.Kind == "" {
				continue
			}
			kinds = append(kinds, tm.Kind)
			var obj any
			switch tm.Kind {
			case "ConfigMap":
				obj = &corev1.ConfigMap{}
			case "ServiceAccount":
				obj = &corev1.ServiceAccount{}
			case "Service":
				obj = &corev1.Service{}
			case "CronJob":
				obj = &batchv1.CronJob{}
			case "Job":
				obj = &batchv1.Job{}
			case "Deployment":
				obj = &appsv1.Deployment{}
			case "ServiceMonitor":
				obj = &serviceMonitor{}
			default:
				t.Errorf("%s: unexpected kind %s", tc.mode, tm.Kind)
				continue
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Errorf("%s: %s: %v\n%s", tc.mode, tm.Kind, err, doc)
				continue
			}
			checkRendered(t, tc.mode, obj, role)
		}
		slices.Sort(kinds)
		if !slices.Equal(kinds, tc.kinds) {
			t.Errorf("%s: rendered %v, want %v", tc.mode, kinds, tc.kinds)
		}
	}
}

// checkRendered checks what ties a rendered object to the rest.
func checkRendered(t *testing.T, mode string, obj any, role string) {
	t.Helper()
	switch o := obj.(type) {
	case *corev1.ServiceAccount:
		if o.Annotations["eks.amazonaws.com/role-arn"] != role {
			t.Errorf("%s: ServiceAccount annotations %v, want the IRSA role", mode, o.Annotations)
		}
	case *batchv1.Job:
		args := o.Spec.Template.Spec.Containers[0].Args
		i := slices.Index(args, "--shards")
		if o.Spec.Completions == nil || i < 0 || args[i+1] != strconv.Itoa(int(*o.Spec.Completions)) ||
			o.Spec.CompletionMode == nil || *o.Spec.CompletionMode != batchv1.IndexedCompletion {
			t.Errorf("%s: Job completions %v, mode %v, args %v: want Indexed with --shards = completions", mode, o.Spec.Completions, o.Spec.CompletionMode, args)
		}
	case *appsv1.Deployment:
		c := o.Spec.Template.Spec.Containers[0]
		if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil ||
			c.LivenessProbe.HTTPGet.Path != "/healthz" || len(c.Ports) != 1 || c.Ports[0].Name != "metrics" ||
			!slices.Contains(c.Args, ":"+strconv.Itoa(int(c.Ports[0].ContainerPort))) {
			t.Errorf("%s: Deployment container %+v: want --listen on the metrics port, /readyz and /healthz probes", mode, c)
		}
	case *batchv1.CronJob:
		if o.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
			t.Errorf("%s: CronJob concurrencyPolicy %q, want Forbid", mode, o.Spec.ConcurrencyPolicy)
		}
	}
}

package deploy

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestDeploymentHealth: the Deployment runs `run --every` serving on the
// port its probes and the Service use, is ready on /readyz and live on
// /healthz, and runs one pod at a time (Recreate: the store's claim is
// ReadWriteOnce, and two runs would contend for the leases).
func TestDeploymentHealth(t *testing.T) {
	var d appsv1.Deployment
	var svc corev1.Service
	decodeStrict(t, "deployment.yaml", &d, "Deployment")
	decodeStrict(t, "service.yaml", &svc, "Service")
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("replicas %v, strategy %q; want 1 and Recreate", d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	arg := func(flag string) string {
		if i := slices.Index(c.Args, flag); i >= 0 && i+1 < len(c.Args) {
			return c.Args[i+1]
		}
		return ""
	}
	if len(c.Args) == 0 || c.Args[0] != "run" || arg("--every") == "" || arg("--listen") == "" {
		t.Fatalf("args %v: want run ... --every DURATION --listen ADDR", c.Args)
	}
	_, port, _ := strings.Cut(arg("--listen"), ":")
	var named string
	for _, p := range c.Ports {
		if p.ContainerPort > 0 && port == strconv.Itoa(int(p.ContainerPort)) {
			named = p.Name
		}
	}
	if named == "" {
		t.Fatalf("--listen %s: no container port %s", arg("--listen"), port)
	}
	for _, p := range []struct {
		probe *corev1.Probe
		path  string
	}{{c.ReadinessProbe, "/readyz"}, {c.LivenessProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != named {
			t.Errorf("probe %+v: want httpGet %s on port %s", p.probe, p.path, named)
		}
	}
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("service selector %s=%s does not select the Deployment's pods (%v)", k, v, d.Spec.Template.Labels)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != named {
		t.Errorf("service ports %+v: want one targeting port %s", svc.Spec.Ports, named)
	}
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("the pod does not require a non-root user")
	}
}

// TestIndexedJob: the Indexed Job's pods take --shards equal to its
// completions (each index one share, every share taken), read the DynamoDB
// variant of the configuration, which every pod can share, and mount no
// claim (a ReadWriteOnce claim cannot be shared).
func TestIndexedJob(t *testing.T) {
	var job batchv1.Job
	var cm corev1.ConfigMap
	decodeStrict(t, "indexed-job.yaml", &job, "Job")
	decodeStrict(t, "configmap-dynamodb.yaml", &cm, "ConfigMap")
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion || job.Spec.Completions == nil {
		t.Fatalf("completionMode %v, completions %v: want Indexed with completions", job.Spec.CompletionMode, job.Spec.Completions)
	}
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	i := slices.Index(c.Args, "--shards")
	if i < 0 || i+1 >= len(c.Args) || c.Args[i+1] != strconv.Itoa(int(*job.Spec.Completions)) {
		t.Errorf("args %v: want --shards %d, the completions", c.Args, *job.Spec.Completions)
	}
	if p := job.Spec.Parallelism; p == nil || *p > *job.Spec.Completions {
		t.Errorf("parallelism %v above completions %d", p, *job.Spec.Completions)
	}
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil {
			t.Errorf("volume %s: a claim; the pods share the DynamoDB store instead", v.Name)
		}
		if v.ConfigMap != nil && v.ConfigMap.Name != cm.Name {
			t.Errorf("volume %s: ConfigMap %q, want %q", v.Name, v.ConfigMap.Name, cm.Name)
		}
	}
	if !strings.Contains(cm.Data["pipelines.yaml"], "store: dynamodb://") {
		t.Errorf("configmap-dynamodb.yaml: the store is not DynamoDB")
	}
}

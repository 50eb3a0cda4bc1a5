package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// manifests builds the kustomization as kubectl apply -k would, and
// decodes every object strictly into its Kubernetes API type: an unknown
// field, a wrong type or an unknown kind fails. (The API types are the
// schema here: kubeconform would fetch its schemas from the network, which
// CI cannot reach.)
type manifests struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	hpa        *autoscalingv2.HorizontalPodAutoscaler
	pdb        *policyv1.PodDisruptionBudget
	dashboard  *corev1.ConfigMap
}

func build(t *testing.T) manifests {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), ".")
	if err != nil {
		t.Fatalf("kustomize build deploy/: %v", err)
	}
	var m manifests
	for _, r := range res.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		var into any
		switch r.GetKind() {
		case "Deployment":
			m.deployment = &appsv1.Deployment{}
			into = m.deployment
		case "Service":
			m.service = &corev1.Service{}
			into = m.service
		case "HorizontalPodAutoscaler":
			m.hpa = &autoscalingv2.HorizontalPodAutoscaler{}
			into = m.hpa
		case "PodDisruptionBudget":
			m.pdb = &policyv1.PodDisruptionBudget{}
			into = m.pdb
		case "ConfigMap":
			m.dashboard = &corev1.ConfigMap{}
			into = m.dashboard
		default:
			t.Fatalf("a %s the checks do not know: add it here", r.GetKind())
		}
		if err := yaml.UnmarshalStrict(y, into); err != nil {
			t.Fatalf("%s %s: %v", r.GetKind(), r.GetName(), err)
		}
	}
	if m.deployment == nil || m.service == nil || m.hpa == nil || m.pdb == nil || m.dashboard == nil {
		t.Fatalf("missing objects: %+v", m)
	}
	return m
}

func TestManifests(t *testing.T) {
	m := build(t)
	d := m.deployment
	pod := d.Spec.Template
	labels := pod.Labels
	matches := func(sel map[string]string) bool {
		for k, v := range sel {
			if labels[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	if !matches(d.Spec.Selector.MatchLabels) || !matches(m.service.Spec.Selector) || !matches(m.pdb.Spec.Selector.MatchLabels) {
		t.Error("the Deployment's, the Service's and the PodDisruptionBudget's selectors must all select the pods")
	}
	if m.hpa.Spec.MinReplicas == nil || *m.hpa.Spec.MinReplicas < 2 {
		t.Error("fewer than two replicas: one that dies takes the service with it")
	}
	if d.Spec.Replicas != nil {
		t.Error("the Deployment sets replicas: each kubectl apply would reset what the autoscaler chose")
	}
	if ref := m.hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != d.Name {
		t.Errorf("the autoscaler scales %s %s", ref.Kind, ref.Name)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]

	// Health: ready means /readyz, which says 503 while draining.
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
		t.Error("the readiness probe must be /readyz")
	}
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Error("the liveness probe must be /healthz")
	}
	// Stopping: preStop, then serve's delay and drain, within the grace period.
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatal("no preStop sleep: the pod would get SIGTERM while the Service still sends to it")
	}
	flags := map[string]string{}
	for _, a := range c.Args {
		k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		flags[k] = v
	}
	seconds := func(flag string) int64 {
		var n int64
		if _, err := fmt.Sscanf(flags[flag], "%ds", &n); err != nil {
			t.Fatalf("--%s=%q: give it in seconds (%v)", flag, flags[flag], err)
		}
		return n
	}
	need := c.Lifecycle.PreStop.Sleep.Seconds + seconds("shutdown-delay") + seconds("shutdown-timeout")
	if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g < need {
		t.Errorf("terminationGracePeriodSeconds %v is less than preStop + --shutdown-delay + --shutdown-timeout = %d", g, need)
	}
	// Secrets from Secrets, never in the manifest.
	fromSecret := map[string]bool{}
	for _, e := range c.Env {
		if e.Value != "" && strings.Contains(strings.ToLower(e.Name), "secret") {
			t.Errorf("%s has a value in the manifest", e.Name)
		}
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			fromSecret[e.Name] = true
		}
	}
	for _, name := range []string{"MCPSTACK_REDIS_URL", "MCPSTACK_POSTGRES_DSN", "MCPSTACK_STATE_KEY", "MCPSTACK_AUTH_SECRET"} {
		if !fromSecret[name] {
			t.Errorf("%s does not come from a Secret", name)
		}
	}
	if flags["auth"] == "" || flags["auth"] == "off" {
		t.Error("the replicas serve a non-loopback address: they need --auth")
	}
	// Not root, nothing to escalate to, nothing written to the image.
	if sc := pod.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("runAsNonRoot is not set")
	}
	if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Error("the container must not escalate, must drop every capability and keep its root file system read-only")
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
		t.Error("no memory limit (GOMEMLIMIT follows it)")
	}
	// The dashboard, for Grafana's sidecar.
	if m.dashboard.Labels["grafana_dashboard"] != "1" {
		t.Error("the dashboard's ConfigMap lacks the grafana_dashboard label")
	}
	var dash struct {
		Title  string            `json:"title"`
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal([]byte(m.dashboard.Data["grafana-dashboard.json"]), &dash); err != nil || dash.Title == "" || len(dash.Panels) == 0 {
		t.Errorf("the dashboard in the ConfigMap: %v", err)
	}
}

// TestDockerfile checks what the image promises, since no Docker engine
// runs here to build it: two stages, a static build, a final image with
// no shell (nothing RUN in it) and a user that is not root.
func TestDockerfile(t *testing.T) {
	f, err := os.Open("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Warnings {
		t.Errorf("Dockerfile: %s", w.Short)
	}
	type stage struct {
		from string
		cmds []string // instruction and its first argument
		runs []string
	}
	var stages []*stage
	for _, n := range res.AST.Children {
		ins := strings.ToUpper(n.Value)
		var args []string
		for a := n.Next; a != nil; a = a.Next {
			args = append(args, a.Value)
		}
		if ins == "FROM" {
			stages = append(stages, &stage{from: strings.Join(args, " ")})
			continue
		}
		if len(stages) == 0 {
			continue // ARG before FROM
		}
		s := stages[len(stages)-1]
		s.cmds = append(s.cmds, ins+" "+strings.Join(args, " "))
		if ins == "RUN" {
			s.runs = append(s.runs, strings.Join(args, " "))
		}
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and a final one", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]
	if !slices.ContainsFunc(build.runs, func(r string) bool { return strings.Contains(r, "CGO_ENABLED=0") && strings.Contains(r, "go build") }) {
		t.Error("the build stage does not build a static binary (CGO_ENABLED=0 go build)")
	}
	if !strings.HasPrefix(final.from, "gcr.io/distroless/static") && final.from != "scratch" {
		t.Errorf("the final image is %s: want one without a shell (distroless static, or scratch)", final.from)
	}
	if len(final.runs) > 0 {
		t.Errorf("the final stage RUNs %q: it has no shell to run them", final.runs)
	}
	var user, entry string
	for _, c := range final.cmds {
		switch {
		case strings.HasPrefix(c, "USER "):
			user = strings.TrimPrefix(c, "USER ")
		case strings.HasPrefix(c, "ENTRYPOINT "):
			entry = strings.TrimPrefix(c, "ENTRYPOINT ")
		}
	}
	if user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("USER %q: the final image must run as a user that is not root", user)
	}
	if !strings.HasPrefix(entry, "/mcpstack serve") {
		t.Errorf("ENTRYPOINT %q, want the binary's serve", entry)
	}
}

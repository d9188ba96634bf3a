package kubernetes_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// deployment is one overlay's objects by kind.
type deployment struct {
	namespaces []*corev1.Namespace
	secrets    []*corev1.Secret
	services   []*corev1.Service
	accounts   []*corev1.ServiceAccount
	daemonsets []*appsv1.DaemonSet
	deploys    []*appsv1.Deployment
	hpas       []*autoscalingv2.HorizontalPodAutoscaler
	pdbs       []*policyv1.PodDisruptionBudget
	roles      []*rbacv1.Role
	bindings   []*rbacv1.RoleBinding
	policies   []*networkingv1.NetworkPolicy
}

func sortOut(t *testing.T, objs []runtime.Object) deployment {
	t.Helper()
	var d deployment
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Namespace:
			d.namespaces = append(d.namespaces, o)
		case *corev1.Secret:
			d.secrets = append(d.secrets, o)
		case *corev1.Service:
			d.services = append(d.services, o)
		case *corev1.ServiceAccount:
			d.accounts = append(d.accounts, o)
		case *appsv1.DaemonSet:
			d.daemonsets = append(d.daemonsets, o)
		case *appsv1.Deployment:
			d.deploys = append(d.deploys, o)
		case *autoscalingv2.HorizontalPodAutoscaler:
			d.hpas = append(d.hpas, o)
		case *policyv1.PodDisruptionBudget:
			d.pdbs = append(d.pdbs, o)
		case *rbacv1.Role:
			d.roles = append(d.roles, o)
		case *rbacv1.RoleBinding:
			d.bindings = append(d.bindings, o)
		case *networkingv1.NetworkPolicy:
			d.policies = append(d.policies, o)
		default:
			t.Errorf("unexpected object %T", o)
		}
	}
	if len(d.daemonsets) != 1 || len(d.deploys) != 1 {
		t.Fatalf("want one DaemonSet (nodes) and one Deployment (gateways), got %d and %d", len(d.daemonsets), len(d.deploys))
	}
	return d
}

func (d deployment) node() *appsv1.DaemonSet     { return d.daemonsets[0] }
func (d deployment) gateway() *appsv1.Deployment { return d.deploys[0] }

func selects(t *testing.T, sel *metav1.LabelSelector, set map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("selector %v: %v", sel, err)
	}
	return !s.Empty() && s.Matches(labels.Set(set))
}

// TestOverlays renders each overlay and checks what the tier relies on.
func TestOverlays(t *testing.T) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			d := sortOut(t, render(t, dir).objects)
			t.Run("namespace", func(t *testing.T) { checkNamespace(t, d) })
			t.Run("selectors", func(t *testing.T) { checkSelectors(t, d) })
			t.Run("containers", func(t *testing.T) { checkContainers(t, d) })
			t.Run("node", func(t *testing.T) { checkNode(t, d) })
			t.Run("gateway", func(t *testing.T) { checkGateway(t, d) })
			t.Run("rbac", func(t *testing.T) { checkRBAC(t, d) })
			t.Run("network policy", func(t *testing.T) { checkNetworkPolicy(t, d) })
			t.Run("secrets", func(t *testing.T) { checkSecrets(t, dir, d) })
		})
	}
}

func checkNamespace(t *testing.T, d deployment) {
	if len(d.namespaces) != 1 || d.namespaces[0].Name != "paddock" {
		t.Fatalf("want the one namespace paddock, got %d", len(d.namespaces))
	}
	if got := d.namespaces[0].Labels["pod-security.kubernetes.io/enforce"]; got != "privileged" {
		t.Errorf("pod security enforce = %q, want privileged (the node pods need host paths and capabilities)", got)
	}
	metas := []metav1.Object{d.node(), d.gateway()}
	for _, s := range d.services {
		metas = append(metas, s)
	}
	for _, r := range d.roles {
		metas = append(metas, r)
	}
	for _, b := range d.bindings {
		metas = append(metas, b)
	}
	for _, p := range d.policies {
		metas = append(metas, p)
	}
	for _, s := range d.secrets {
		metas = append(metas, s)
	}
	for _, m := range metas {
		if m.GetNamespace() != "paddock" {
			t.Errorf("%s is in namespace %q, want paddock", m.GetName(), m.GetNamespace())
		}
	}
}

func checkSelectors(t *testing.T, d deployment) {
	nodePods, gwPods := d.node().Spec.Template.Labels, d.gateway().Spec.Template.Labels
	if !selects(t, d.node().Spec.Selector, nodePods) {
		t.Errorf("the DaemonSet's selector does not select its pods (%v)", nodePods)
	}
	if !selects(t, d.gateway().Spec.Selector, gwPods) {
		t.Errorf("the Deployment's selector does not select its pods (%v)", gwPods)
	}
	if selects(t, d.node().Spec.Selector, gwPods) || selects(t, d.gateway().Spec.Selector, nodePods) {
		t.Error("node and gateway selectors overlap")
	}
	byName := map[string]*corev1.Service{}
	for _, s := range d.services {
		byName[s.Name] = s
	}
	node, gw := byName["paddock-node"], byName["paddock"]
	if node == nil || gw == nil {
		t.Fatalf("want Services paddock-node and paddock, got %v", slices.Collect(maps.Keys(byName)))
	}
	if node.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("paddock-node clusterIP = %q, want None (headless, for its EndpointSlices)", node.Spec.ClusterIP)
	}
	if !labels.SelectorFromSet(node.Spec.Selector).Matches(labels.Set(nodePods)) || labels.SelectorFromSet(node.Spec.Selector).Matches(labels.Set(gwPods)) {
		t.Errorf("paddock-node selects %v: want the node pods only", node.Spec.Selector)
	}
	if !labels.SelectorFromSet(gw.Spec.Selector).Matches(labels.Set(gwPods)) || labels.SelectorFromSet(gw.Spec.Selector).Matches(labels.Set(nodePods)) {
		t.Errorf("paddock selects %v: want the gateway pods only", gw.Spec.Selector)
	}
	for _, s := range []*corev1.Service{node, gw} {
		pod := d.node().Spec.Template.Spec
		if s == gw {
			pod = d.gateway().Spec.Template.Spec
		}
		for _, p := range s.Spec.Ports {
			if !hasPort(pod.Containers, p.TargetPort.StrVal) {
				t.Errorf("Service %s targets port %q, which its pods do not name", s.Name, p.TargetPort.String())
			}
		}
	}
	if len(d.pdbs) != 1 || !selects(t, d.pdbs[0].Spec.Selector, gwPods) || selects(t, d.pdbs[0].Spec.Selector, nodePods) {
		t.Error("want one PodDisruptionBudget selecting the gateway pods only")
	}
	if len(d.hpas) != 1 {
		t.Fatalf("want one HorizontalPodAutoscaler, got %d", len(d.hpas))
	}
	ref := d.hpas[0].Spec.ScaleTargetRef
	if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || ref.Name != d.gateway().Name {
		t.Errorf("the HPA scales %s/%s %s, want the gateway Deployment %s", ref.APIVersion, ref.Kind, ref.Name, d.gateway().Name)
	}
	if min := d.hpas[0].Spec.MinReplicas; min == nil || *min < 1 || *min > d.hpas[0].Spec.MaxReplicas {
		t.Errorf("the HPA's replicas: min %v, max %d", min, d.hpas[0].Spec.MaxReplicas)
	}
	if d.gateway().Spec.Replicas != nil {
		t.Error("the gateway Deployment sets replicas: the HPA owns them, and every apply would undo its scaling")
	}
}

func hasPort(cs []corev1.Container, name string) bool {
	for _, c := range cs {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

// checkContainers: every container has requests and a memory limit, and
// every long-running one a readiness and a liveness probe.
func checkContainers(t *testing.T, d deployment) {
	pods := map[string]corev1.PodSpec{"node": d.node().Spec.Template.Spec, "gateway": d.gateway().Spec.Template.Spec}
	for name, pod := range pods {
		all := append(slices.Clone(pod.InitContainers), pod.Containers...)
		for _, c := range all {
			r := c.Resources
			if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Memory().IsZero() {
				t.Errorf("%s container %s: want cpu and memory requests and a memory limit, got %v", name, c.Name, r)
			}
			if c.Image == "" || !strings.HasPrefix(c.Image, "ghcr.io/paddock-dev/paddock:") {
				t.Errorf("%s container %s: image %q", name, c.Name, c.Image)
			}
		}
		for _, c := range pod.Containers {
			if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
				t.Errorf("%s container %s: want a readiness probe on /readyz", name, c.Name)
			}
			if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Errorf("%s container %s: want a liveness probe on /healthz", name, c.Name)
			}
		}
	}
}

// flag is the value of --name in args, or "".
func flag(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

func checkNode(t *testing.T, d deployment) {
	ds := d.node()
	pod := ds.Spec.Template.Spec
	if got := pod.NodeSelector; len(got) != 1 || got["paddock.dev/sandbox-node"] != "true" {
		t.Errorf("node selector %v, want paddock.dev/sandbox-node=true only", got)
	}
	tolerated := slices.ContainsFunc(pod.Tolerations, func(tl corev1.Toleration) bool {
		return tl.Key == "paddock.dev/sandbox-node" && tl.Effect == corev1.TaintEffectNoSchedule
	})
	if !tolerated {
		t.Error("the node pods do not tolerate the sandbox machines' taint")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("want one node container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Args[0] != "serve" || flag(c.Args, "role") != "node" {
		t.Errorf("node args %v: want serve --role=node", c.Args)
	}
	for name, want := range map[string]string{
		"node-name":            "$(NODE_NAME)",
		"node-credential-file": "/etc/paddock/node-credential/credential",
		"cache-dir":            "/var/cache/paddock",
		"state-dir":            "/var/lib/paddock",
	} {
		if got := flag(c.Args, name); got != want {
			t.Errorf("--%s = %q, want %q", name, got, want)
		}
	}
	nodeName := slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName"
	})
	if !nodeName {
		t.Error("NODE_NAME does not come from the downward API's spec.nodeName")
	}

	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil {
		t.Fatal("the node container states no security context")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Error("the node container is privileged; it needs only its listed capabilities")
	}
	if !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("drops %v, want ALL", sc.Capabilities.Drop)
	}
	// What docs/kubernetes.md measured runsc and Paddock to need.
	want := []corev1.Capability{"DAC_READ_SEARCH", "NET_ADMIN", "NET_RAW", "SETFCAP", "SETGID", "SETUID", "SYS_ADMIN"}
	if got := slices.Sorted(slices.Values(sc.Capabilities.Add)); !slices.Equal(got, want) {
		t.Errorf("adds %v, want %v", got, want)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the node container's root filesystem is writable")
	}

	hostPaths := map[string]string{}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			hostPaths[v.HostPath.Path] = v.Name
		}
	}
	mounted := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounted[m.Name] = m.MountPath
	}
	for _, p := range []string{"/var/cache/paddock", "/var/lib/paddock", "/sys/fs/cgroup"} {
		if name, ok := hostPaths[p]; !ok || mounted[name] != p {
			t.Errorf("host path %s is not mounted at %s", p, p)
		}
	}
	if len(hostPaths) != 3 {
		t.Errorf("host paths %v, want only the cache, the state and the cgroup tree", hostPaths)
	}

	// SIGTERM: the preStop pause, the drain of --shutdown-wait, then the
	// hibernation of open sessions within the server's 30 s close deadline.
	wait, err := time.ParseDuration(flag(c.Args, "shutdown-wait"))
	if err != nil {
		t.Fatalf("--shutdown-wait: %v", err)
	}
	var pause time.Duration
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		pause = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	}
	need := pause + wait + 30*time.Second
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= need {
		t.Errorf("terminationGracePeriodSeconds %v, want more than %s (preStop %s + --shutdown-wait %s + 30 s to hibernate)", g, need, pause, wait)
	}
	if got := ds.Spec.Template.Annotations["prometheus.io/scrape"]; got != "false" {
		t.Errorf("node pods prometheus.io/scrape = %q, want false (only gateways reach them)", got)
	}
	if pod.ServiceAccountName != "paddock-node" || pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("node pods should run as paddock-node with no API token")
	}
}

func checkGateway(t *testing.T, d deployment) {
	dep := d.gateway()
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	if c.Args[0] != "serve" || flag(c.Args, "role") != "gateway" {
		t.Errorf("gateway args %v: want serve --role=gateway", c.Args)
	}
	if flag(c.Args, "node-credential-file") == "" || flag(c.Args, "jwt-hs256-secret-file") == "" {
		t.Error("the gateway needs the node credential and the callers' JWT key")
	}
	// The restricted Pod Security level.
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("gateway pods: want runAsNonRoot and the RuntimeDefault seccomp profile")
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Error("the gateway container: want no privilege escalation and every capability dropped")
	}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			t.Errorf("the gateway mounts host path %s: it holds no state", v.HostPath.Path)
		}
	}
	a := dep.Spec.Template.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/path"] != "/metrics" || a["prometheus.io/port"] != "8080" {
		t.Errorf("gateway scrape annotations %v", a)
	}
	if c.Ports[0].ContainerPort != 8080 {
		t.Errorf("the gateway serves on %d, its scrape annotation says 8080", c.Ports[0].ContainerPort)
	}
}

func checkRBAC(t *testing.T, d deployment) {
	if len(d.roles) != 1 || len(d.bindings) != 1 {
		t.Fatalf("want one Role and one RoleBinding, got %d and %d", len(d.roles), len(d.bindings))
	}
	role, binding := d.roles[0], d.bindings[0]
	readOnly := []string{"get", "list", "watch"}
	slicesWatched := false
	for _, r := range role.Rules {
		for _, v := range r.Verbs {
			if !slices.Contains(readOnly, v) {
				t.Errorf("rule %v grants %q: want only get, list and watch", r.Resources, v)
			}
		}
		if slices.Contains(r.APIGroups, "discovery.k8s.io") && slices.Contains(r.Resources, "endpointslices") &&
			slices.Equal(slices.Sorted(slices.Values(r.Verbs)), readOnly) && len(r.ResourceNames) == 0 {
			slicesWatched = true
		}
		if slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") || slices.Contains(r.Resources, "secrets") {
			t.Errorf("rule %v in %v is too wide", r.Resources, r.APIGroups)
		}
	}
	if !slicesWatched {
		t.Error("the Role does not let the gateways get, list and watch endpointslices")
	}
	if binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != role.Name {
		t.Errorf("the binding refers to %s %s, want Role %s", binding.RoleRef.Kind, binding.RoleRef.Name, role.Name)
	}
	sa := d.gateway().Spec.Template.Spec.ServiceAccountName
	if len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "ServiceAccount" || binding.Subjects[0].Name != sa || binding.Subjects[0].Namespace != "paddock" {
		t.Errorf("the binding's subjects %v, want the gateways' ServiceAccount %s in paddock", binding.Subjects, sa)
	}
	if !slices.ContainsFunc(d.accounts, func(a *corev1.ServiceAccount) bool { return a.Name == sa }) {
		t.Errorf("ServiceAccount %s is not part of the deployment", sa)
	}
}

func checkNetworkPolicy(t *testing.T, d deployment) {
	nodePods, gwPods := d.node().Spec.Template.Labels, d.gateway().Spec.Template.Labels
	var ingress *networkingv1.NetworkPolicy
	for _, p := range d.policies {
		if slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) && selects(t, &p.Spec.PodSelector, nodePods) {
			if ingress != nil {
				t.Fatal("more than one ingress policy selects the node pods")
			}
			ingress = p
		}
		if selects(t, &p.Spec.PodSelector, gwPods) {
			t.Errorf("policy %s selects the gateway pods too", p.Name)
		}
	}
	if ingress == nil {
		t.Fatal("no ingress NetworkPolicy selects the node pods")
	}
	if len(ingress.Spec.Ingress) != 1 {
		t.Fatalf("want one ingress rule, got %d", len(ingress.Spec.Ingress))
	}
	rule := ingress.Spec.Ingress[0]
	if len(rule.From) == 0 {
		t.Fatal("the ingress rule admits every source")
	}
	for _, peer := range rule.From {
		if peer.IPBlock != nil || peer.NamespaceSelector != nil || peer.PodSelector == nil ||
			!selects(t, peer.PodSelector, gwPods) || selects(t, peer.PodSelector, nodePods) {
			t.Errorf("ingress peer %+v: want the gateway pods of this namespace only", peer)
		}
	}
	if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.StrVal != "api" ||
		!hasPort(d.node().Spec.Template.Spec.Containers, "api") {
		t.Errorf("ingress ports %v: want the node's api port only", rule.Ports)
	}
}

// checkSecrets: every Secret a pod mounts is in the overlay (dev, which
// generates them) or is one of the two an operator creates (production).
func checkSecrets(t *testing.T, dir string, d deployment) {
	have := map[string]bool{}
	for _, s := range d.secrets {
		have[s.Name] = true
	}
	var mounted []string
	for _, pod := range []corev1.PodSpec{d.node().Spec.Template.Spec, d.gateway().Spec.Template.Spec} {
		for _, v := range pod.Volumes {
			if v.Secret != nil {
				mounted = append(mounted, v.Secret.SecretName)
			}
		}
	}
	if len(mounted) != 4 {
		t.Fatalf("secret volumes %v: want the credential and the JWT key on both pods", mounted)
	}
	for _, name := range mounted {
		switch {
		case strings.HasSuffix(dir, "dev"):
			if !have[name] {
				t.Errorf("%s mounts Secret %s, which it does not generate", dir, name)
			}
		default:
			if len(d.secrets) != 0 {
				t.Errorf("%s holds %d Secrets: their values do not belong in the repository", dir, len(d.secrets))
			}
			if name != "paddock-node-credential" && name != "paddock-jwt" {
				t.Errorf("%s mounts Secret %s, not one docs/kubernetes.md tells the operator to create", dir, name)
			}
		}
	}
}

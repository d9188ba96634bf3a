package kubernetes_test

import (
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/paddock-dev/paddock/internal/kubetest"
)

// resources maps each kind the deployment holds to its API resource and
// whether it lives in a namespace.
var resources = map[string]struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	"Namespace":               {schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, false},
	"Secret":                  {schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, true},
	"Service":                 {schema.GroupVersionResource{Version: "v1", Resource: "services"}, true},
	"ServiceAccount":          {schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, true},
	"DaemonSet":               {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, true},
	"Deployment":              {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
	"HorizontalPodAutoscaler": {schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, true},
	"PodDisruptionBudget":     {schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, true},
	"Role":                    {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, true},
	"RoleBinding":             {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, true},
	"NetworkPolicy":           {schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, true},
}

// apply sends y to the API server as a server-side apply with strict
// field validation; dryRun leaves nothing stored.
func apply(t *testing.T, c dynamic.Interface, y []byte, dryRun bool) error {
	t.Helper()
	var u unstructured.Unstructured
	if err := yaml.Unmarshal(y, &u.Object); err != nil {
		t.Fatalf("parsing %s: %v", y, err)
	}
	r, ok := resources[u.GetKind()]
	if !ok {
		t.Fatalf("no API resource known for kind %s", u.GetKind())
	}
	opts := metav1.PatchOptions{FieldManager: "paddock-manifests-test", FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var ri dynamic.ResourceInterface = c.Resource(r.gvr)
	if r.namespaced {
		ri = c.Resource(r.gvr).Namespace(u.GetNamespace())
	}
	_, err := ri.Patch(t.Context(), u.GetName(), types.ApplyPatchType, y, opts)
	return err
}

// TestServerSideDryRun applies every overlay to a real kube-apiserver:
// the namespace for real (the others need it), every other object as a
// server-side dry run, which runs the server's own validation, defaulting
// and admission (Pod Security included) without storing anything.
//
// The namespace warns at the restricted Pod Security level: the node
// pods draw warnings (they need root, host paths and capabilities), the
// gateway pods must draw none.
func TestServerSideDryRun(t *testing.T) {
	s := kubetest.Start(t)
	cfg := rest.CopyConfig(s.Config)
	warned := &warnings{}
	cfg.WarningHandler = warned
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			out := render(t, dir)
			for i, y := range out.yaml {
				isNamespace := strings.Contains(string(y), "kind: Namespace\n")
				warned.take()
				if err := apply(t, c, y, !isNamespace); err != nil {
					t.Errorf("applying object %d:\n%s\n%v", i, y, err)
				}
				got := warned.take()
				switch kind := string(y); {
				case strings.Contains(kind, "kind: DaemonSet\n"):
					if len(got) == 0 || !strings.Contains(got[0], "restricted") {
						t.Errorf("the node DaemonSet drew no restricted-level warning: %q", got)
					}
				case len(got) != 0:
					t.Errorf("object %d drew warnings %q:\n%s", i, got, y)
				}
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		bad := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\n  namespace: paddock\n" +
			"spec:\n  selector:\n    matchLabels: {app: bad}\n  template:\n    metadata:\n      labels: {app: bad}\n" +
			"    spec:\n      containers:\n        - name: c\n          image: x\n          imagePullPolicy: Always\n          resourcez: {}\n"
		if err := apply(t, c, []byte(bad), true); err == nil || !strings.Contains(err.Error(), "resourcez") {
			t.Fatalf("a Deployment with an unknown field: err = %v, want a refusal naming it", err)
		}
	})
}

// warnings keeps the API server's warning headers.
type warnings struct {
	mu   sync.Mutex
	text []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text = append(w.text, text)
}

// take returns the warnings so far and forgets them.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.text
	w.text = nil
	return t
}

package kubernetes_test

import (
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// overlays are the directories an operator applies.
var overlays = []string{"overlays/dev", "overlays/production"}

// scheme knows only the kinds the deployment may hold: an object of any
// other kind fails to decode.
func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, autoscalingv2.AddToScheme,
		policyv1.AddToScheme, rbacv1.AddToScheme, networkingv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// strictDecoder decodes YAML into the typed object its apiVersion and kind
// name, failing on unknown or duplicate fields.
func strictDecoder(s *runtime.Scheme) runtime.Decoder {
	return json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s,
		json.SerializerOptions{Yaml: true, Strict: true})
}

// rendered is one overlay's output: every object as YAML and decoded.
type rendered struct {
	yaml    [][]byte
	objects []runtime.Object
}

// render builds dir as `kubectl apply -k` would, from the files on disk,
// and decodes every object strictly.
func render(t *testing.T, dir string) rendered {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(".", dir))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	dec := strictDecoder(scheme(t))
	var out rendered
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %s as YAML: %v", dir, r.CurId(), err)
		}
		obj, _, err := dec.Decode(y, nil, nil)
		if err != nil {
			t.Fatalf("%s: decoding %s strictly: %v", dir, r.CurId(), err)
		}
		out.yaml = append(out.yaml, y)
		out.objects = append(out.objects, obj)
	}
	return out
}

// TestStrictDecoderRefusesUnknownFields shows the check the overlays pass
// can fail: a misspelt field and an unknown kind are refused.
func TestStrictDecoderRefusesUnknownFields(t *testing.T) {
	dec := strictDecoder(scheme(t))
	for name, y := range map[string]string{
		"misspelt field": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replica: 2\n",
		"nested field":   "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  ports:\n    - port: 80\n      targetport: 8080\n",
		"duplicate key":  "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n  name: y\n",
		"unknown kind":   "apiVersion: apps/v1\nkind: Deploymnet\nmetadata:\n  name: x\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := dec.Decode([]byte(y), nil, nil); err == nil {
				t.Fatalf("decoded without an error:\n%s", y)
			}
		})
	}
	good := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: 2\n"
	if _, _, err := dec.Decode([]byte(good), nil, nil); err != nil {
		t.Fatalf("a valid Deployment: %v", err)
	}
}

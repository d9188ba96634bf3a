package discovery

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/paddock-dev/paddock/internal/kubetest"
)

func endpoint(node, addr string, ready *bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{
		Addresses:  []string{addr},
		NodeName:   ptr.To(node),
		Conditions: discoveryv1.EndpointConditions{Ready: ready},
	}
}

func endpointSlice(name, service string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{discoveryv1.LabelServiceName: service},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("api"), Port: ptr.To[int32](8080)}},
		Endpoints:   eps,
	}
}

// TestKubernetes follows a node Service's EndpointSlices on a real API
// server through adds, readiness changes and removals, and ignores the
// slices of another Service.
func TestKubernetes(t *testing.T) {
	srv := kubetest.Start(t)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const ns = "paddock"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "paddock-node"},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{"app": "paddock-node"},
			Ports:     []corev1.ServicePort{{Name: "api", Port: 8080}},
		},
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slicesAPI := cs.DiscoveryV1().EndpointSlices(ns)
	create := func(s *discoveryv1.EndpointSlice) {
		t.Helper()
		if _, err := slicesAPI.Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating slice %s: %v", s.Name, err)
		}
	}
	// Another Service's slice: never a node.
	create(endpointSlice("other-x", "other", endpoint("node-x", "10.1.0.9", ptr.To(true))))
	create(endpointSlice("paddock-node-a", "paddock-node",
		endpoint("node-a", "10.1.0.1", ptr.To(true)),
		endpoint("node-b", "10.1.0.2", nil), // unknown readiness counts as ready
		endpoint("node-z", "10.1.0.26", ptr.To(false)),
	))

	src := NewKubernetes(cs, KubernetesConfig{Namespace: ns, Service: "paddock-node", Port: "api"},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- src.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()

	waitNodes(t, src, []Node{{"node-a", "10.1.0.1:8080"}, {"node-b", "10.1.0.2:8080"}})

	// A slice added.
	create(endpointSlice("paddock-node-b", "paddock-node", endpoint("node-c", "10.1.0.3", ptr.To(true))))
	waitNodes(t, src, []Node{{"node-a", "10.1.0.1:8080"}, {"node-b", "10.1.0.2:8080"}, {"node-c", "10.1.0.3:8080"}})

	// Readiness changes: node-b stops being ready, node-z becomes ready.
	a, err := slicesAPI.Get(ctx, "paddock-node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Endpoints[1].Conditions.Ready = ptr.To(false)
	a.Endpoints[2].Conditions.Ready = ptr.To(true)
	if _, err := slicesAPI.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNodes(t, src, []Node{{"node-a", "10.1.0.1:8080"}, {"node-c", "10.1.0.3:8080"}, {"node-z", "10.1.0.26:8080"}})

	// A slice removed.
	if err := slicesAPI.Delete(ctx, "paddock-node-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNodes(t, src, []Node{{"node-c", "10.1.0.3:8080"}})

	// The last one removed: no nodes.
	if err := slicesAPI.Delete(ctx, "paddock-node-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNodes(t, src, nil)
}

func TestNodesOf(t *testing.T) {
	withPorts := func(s *discoveryv1.EndpointSlice, ports ...discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
		s.Ports = ports
		return s
	}
	hostOnly := discoveryv1.Endpoint{Addresses: []string{"10.0.0.5"}, Hostname: ptr.To("paddock-0")}
	podOnly := discoveryv1.Endpoint{Addresses: []string{"fd00::7"}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "paddock-node-abcde"}}
	nameless := discoveryv1.Endpoint{Addresses: []string{"10.0.0.8"}}
	noAddr := discoveryv1.Endpoint{NodeName: ptr.To("node-q")}
	tests := []struct {
		name  string
		slice *discoveryv1.EndpointSlice
		port  string
		want  []Node
	}{
		{"named port", endpointSlice("s", "svc", endpoint("n1", "10.0.0.1", nil)), "api", []Node{{"n1", "10.0.0.1:8080"}}},
		{"other port name", endpointSlice("s", "svc", endpoint("n1", "10.0.0.1", nil)), "metrics", nil},
		{"only port, none named", endpointSlice("s", "svc", endpoint("n1", "10.0.0.1", nil)), "", []Node{{"n1", "10.0.0.1:8080"}}},
		{"two ports, none named", withPorts(endpointSlice("s", "svc", endpoint("n1", "10.0.0.1", nil)),
			discoveryv1.EndpointPort{Name: ptr.To("a"), Port: ptr.To[int32](1)},
			discoveryv1.EndpointPort{Name: ptr.To("b"), Port: ptr.To[int32](2)}), "", nil},
		{"port without number", withPorts(endpointSlice("s", "svc", endpoint("n1", "10.0.0.1", nil)),
			discoveryv1.EndpointPort{Name: ptr.To("api")}), "api", nil},
		{"hostname, pod name, no name, no address", endpointSlice("s", "svc", hostOnly, podOnly, nameless, noAddr), "api",
			[]Node{{"paddock-0", "10.0.0.5:8080"}, {"paddock-node-abcde", "[fd00::7]:8080"}}},
		{"not ready", endpointSlice("s", "svc", endpoint("n1", "10.0.0.1", ptr.To(false))), "api", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nodesOf([]*discoveryv1.EndpointSlice{tt.slice}, tt.port)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("nodes = %v, want %v", got, tt.want)
			}
		})
	}
}

package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/paddock-dev/paddock/gateway"
	"github.com/paddock-dev/paddock/internal/kubetest"
)

// TestGatewayDiscoversNodes: a gateway started with --discovery=kubernetes
// (from outside the cluster, by --kube-api and --kube-token-file) follows
// the node Service's EndpointSlices on a real API server: a ready node
// joins its set at http://address:port under its Kubernetes node name
// (dots and all), one not ready stays out, and a removed slice takes its
// node away.
func TestGatewayDiscoversNodes(t *testing.T) {
	srv := kubetest.Start(t)
	dir := t.TempDir()
	token, ca := filepath.Join(dir, "token"), filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(token, []byte(srv.Config.BearerToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, srv.Config.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const ns = "paddock"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	c := roleConfig{Role: roleGateway, discoveryConfig: discoveryConfig{Discovery: discoverKubernetes,
		NodeService: ns + "/paddock-node", NodePort: "api", KubeAPI: srv.Config.Host, KubeToken: token, KubeCA: ca}}
	if err := c.checkDiscovery(); err != nil {
		t.Fatal(err)
	}
	source, follow, err := c.nodeSource(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	runDiscovery(ctx, follow, slog.New(slog.DiscardHandler))
	// until waits for the gateway's view to be want, on the source's
	// change notifications.
	until := func(want []gateway.Node) {
		t.Helper()
		for {
			_, changed := follow.Nodes()
			if got := source.Nodes(); slices.Equal(got, want) {
				return
			}
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatalf("the gateway's nodes are %v, never %v", source.Nodes(), want)
			}
		}
	}

	endpoint := func(node, addr string, ready bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{addr}, NodeName: ptr.To(node),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "paddock-node-a", Labels: map[string]string{discoveryv1.LabelServiceName: "paddock-node"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("api"), Port: ptr.To[int32](8080)}},
		Endpoints:   []discoveryv1.Endpoint{endpoint("ip-10-0-0-7.ec2.internal", "10.0.0.7", true), endpoint("n2", "10.0.0.8", false)},
	}
	if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	until([]gateway.Node{{Name: "ip-10-0-0-7.ec2.internal", URL: "http://10.0.0.7:8080"}})

	if err := cs.DiscoveryV1().EndpointSlices(ns).Delete(ctx, slice.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	until([]gateway.Node{})
}

// A gateway's discovery flags: each source needs its own, and --nodes is
// for the static one.
func TestDiscoveryFlags(t *testing.T) {
	for _, tc := range []struct {
		cfg  discoveryConfig
		node string
		want string
	}{
		{discoveryConfig{Discovery: discoverStatic}, "", "--role=gateway needs --nodes"},
		{discoveryConfig{Discovery: discoverKubernetes}, "", "--discovery=kubernetes needs --node-service"},
		{discoveryConfig{Discovery: discoverKubernetes, NodeService: "s", KubeAPI: "https://x"}, "", "--kube-api and --kube-token-file go together"},
		{discoveryConfig{Discovery: discoverDNS}, "", "--discovery=dns needs --node-srv"},
		{discoveryConfig{Discovery: discoverDNS, NodeSRV: "_api._tcp.n"}, "a=http://x:1", "--nodes is for --discovery=static, not dns"},
		{discoveryConfig{Discovery: "consul"}, "", `--discovery "consul": want static, kubernetes or dns`},
	} {
		c := roleConfig{Role: roleGateway, discoveryConfig: tc.cfg, Nodes: tc.node}
		err := c.checkDiscovery()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}
}

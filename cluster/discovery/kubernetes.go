package discovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// KubernetesConfig names the node Service whose EndpointSlices a
// Kubernetes source follows.
type KubernetesConfig struct {
	Namespace string
	Service   string
	// Port is the name of the Service port the nodes' API listens on;
	// empty takes a slice's only port.
	Port string
}

// Kubernetes is a node set from the EndpointSlices of the node Service,
// watched with an informer that lists only the slices labelled
// kubernetes.io/service-name=<Service>. Only ready endpoints are nodes.
// A node's name is its endpoint's nodeName (one Paddock node per
// Kubernetes node, as the DaemonSet runs them), else its hostname, else
// the pod's name; its address is the endpoint's first address and the
// port.
type Kubernetes struct {
	set
	client kubernetes.Interface
	cfg    KubernetesConfig
	log    *slog.Logger
}

var _ Source = (*Kubernetes)(nil)

// NewKubernetes returns a source following cfg's Service through client.
func NewKubernetes(client kubernetes.Interface, cfg KubernetesConfig, log *slog.Logger) *Kubernetes {
	return &Kubernetes{client: client, cfg: cfg, log: log}
}

// Run watches the slices until ctx ends. It fails when the first list
// cannot be had before ctx ends.
func (k *Kubernetes) Run(ctx context.Context) error {
	if k.cfg.Namespace == "" || k.cfg.Service == "" {
		return errors.New("discovery: Kubernetes source needs a namespace and a service")
	}
	factory := informers.NewSharedInformerFactoryWithOptions(k.client, 0,
		informers.WithNamespace(k.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{discoveryv1.LabelServiceName: k.cfg.Service}.String()
		}))
	slices := factory.Discovery().V1().EndpointSlices()
	inf := slices.Informer()
	lister := slices.Lister().EndpointSlices(k.cfg.Namespace)
	refresh := func() {
		all, err := lister.List(labels.Everything())
		if err != nil {
			k.log.Warn("listing the node EndpointSlices", "err", err)
			return
		}
		k.update(nodesOf(all, k.cfg.Port))
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { refresh() },
		UpdateFunc: func(any, any) { refresh() },
		DeleteFunc: func(any) { refresh() },
	}
	reg, err := inf.AddEventHandler(handler)
	if err != nil {
		return fmt.Errorf("watching EndpointSlices: %w", err)
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("discovery: EndpointSlices never synced")
	}
	refresh()
	<-ctx.Done()
	return nil
}

// nodesOf returns the ready endpoints of slices as nodes.
func nodesOf(slices []*discoveryv1.EndpointSlice, portName string) []Node {
	var nodes []Node
	for _, s := range slices {
		port, ok := slicePort(s, portName)
		if !ok {
			continue
		}
		for _, ep := range s.Endpoints {
			// An unset ready condition means unknown, which is to be read
			// as ready (the EndpointSlice API's own advice).
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			if len(ep.Addresses) == 0 {
				continue
			}
			name := endpointName(ep)
			if name == "" {
				continue
			}
			nodes = append(nodes, Node{Name: name, Addr: net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port)))})
		}
	}
	return nodes
}

func endpointName(ep discoveryv1.Endpoint) string {
	switch {
	case ep.NodeName != nil && *ep.NodeName != "":
		return *ep.NodeName
	case ep.Hostname != nil && *ep.Hostname != "":
		return *ep.Hostname
	case ep.TargetRef != nil && ep.TargetRef.Name != "":
		return ep.TargetRef.Name
	}
	return ""
}

// slicePort finds the named port (or the only one) of a slice.
func slicePort(s *discoveryv1.EndpointSlice, name string) (int32, bool) {
	if name == "" && len(s.Ports) != 1 {
		return 0, false
	}
	for _, p := range s.Ports {
		if p.Port == nil {
			continue
		}
		if name == "" || (p.Name != nil && *p.Name == name) {
			return *p.Port, true
		}
	}
	return 0, false
}

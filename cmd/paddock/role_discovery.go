package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/paddock-dev/paddock/cluster/discovery"
	"github.com/paddock-dev/paddock/gateway"
)

// How a gateway finds its nodes (--discovery): a static list (--nodes),
// the EndpointSlices of the node Service (kubernetes), or DNS SRV
// records (dns). Every source gives node names and host:port addresses;
// the gateway reaches a node at http://host:port.
const (
	discoverStatic     = "static"
	discoverKubernetes = "kubernetes"
	discoverDNS        = "dns"
)

// discoveryConfig is the part of roleConfig that says where a gateway's
// nodes come from.
type discoveryConfig struct {
	Discovery   string
	NodeService string // kubernetes: [namespace/]service
	NodePort    string // kubernetes: the Service port's name; empty: its only one
	NodeSRV     string // dns: the SRV record name, e.g. _api._tcp.paddock-node.paddock.svc.cluster.local
	KubeAPI     string // kubernetes from outside a cluster: the API server's URL
	KubeToken   string // its bearer token's file
	KubeCA      string // its CA bundle's file
}

func (c *discoveryConfig) registerDiscoveryFlags(fsReg func(p *string, name, value, usage string)) {
	fsReg(&c.Discovery, "discovery", env("PADDOCK_DISCOVERY", discoverStatic), "how a gateway finds its nodes: static (--nodes), kubernetes (the EndpointSlices of --node-service) or dns (the SRV records --node-srv)")
	fsReg(&c.NodeService, "node-service", env("PADDOCK_NODE_SERVICE", ""), "--discovery=kubernetes: the nodes' Service, [namespace/]name (namespace: $POD_NAMESPACE, else the pod's service account's)")
	fsReg(&c.NodePort, "node-port-name", env("PADDOCK_NODE_PORT_NAME", ""), "--discovery=kubernetes: the name of the Service port the nodes' API listens on (empty: the only one)")
	fsReg(&c.NodeSRV, "node-srv", env("PADDOCK_NODE_SRV", ""), "--discovery=dns: the SRV record naming the nodes (a target's first label is the node's name)")
	fsReg(&c.KubeAPI, "kube-api", env("PADDOCK_KUBE_API", ""), "--discovery=kubernetes outside a cluster: the API server's URL (empty: the in-cluster service account)")
	fsReg(&c.KubeToken, "kube-token-file", env("PADDOCK_KUBE_TOKEN_FILE", ""), "with --kube-api: the file holding the bearer token")
	fsReg(&c.KubeCA, "kube-ca-file", env("PADDOCK_KUBE_CA_FILE", ""), "with --kube-api: the API server's CA bundle")
}

// checkDiscovery checks a gateway's discovery flags.
func (c *roleConfig) checkDiscovery() error {
	switch c.Discovery {
	case discoverStatic:
		if c.Nodes == "" {
			return errors.New("--role=gateway needs --nodes (name=url,...), or --discovery=kubernetes or dns")
		}
		set, err := gateway.ParseStatic(c.Nodes)
		if err != nil {
			return fmt.Errorf("--nodes: %w", err)
		}
		c.nodeSet = set
	case discoverKubernetes:
		if c.NodeService == "" {
			return errors.New("--discovery=kubernetes needs --node-service ([namespace/]name)")
		}
		if (c.KubeAPI == "") != (c.KubeToken == "") {
			return errors.New("--kube-api and --kube-token-file go together")
		}
	case discoverDNS:
		if c.NodeSRV == "" {
			return errors.New("--discovery=dns needs --node-srv")
		}
	default:
		return fmt.Errorf("--discovery %q: want static, kubernetes or dns", c.Discovery)
	}
	if c.Discovery != discoverStatic && c.Nodes != "" {
		return fmt.Errorf("--nodes is for --discovery=static, not %s", c.Discovery)
	}
	return nil
}

// nodeSource is the gateway's node set, and what keeps it current (nil
// for a static one).
func (c *roleConfig) nodeSource(logger *slog.Logger) (gateway.Source, discovery.Source, error) {
	switch c.Discovery {
	case discoverKubernetes:
		ns, svc, err := c.service()
		if err != nil {
			return nil, nil, err
		}
		rc, err := c.kubeConfig()
		if err != nil {
			return nil, nil, err
		}
		client, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, nil, fmt.Errorf("--discovery=kubernetes: %w", err)
		}
		src := discovery.NewKubernetes(client, discovery.KubernetesConfig{Namespace: ns, Service: svc, Port: c.NodePort},
			logger.With("component", "discovery"))
		return &discovered{src: src, log: logger}, src, nil
	case discoverDNS:
		src := discovery.NewSRV(net.DefaultResolver, discovery.SRVConfig{Name: c.NodeSRV, Interval: 10 * time.Second},
			logger.With("component", "discovery"))
		return &discovered{src: src, log: logger}, src, nil
	}
	return c.nodeSet, nil, nil
}

// service splits --node-service, taking the namespace from the pod's
// environment when it names none.
func (c *roleConfig) service() (string, string, error) {
	if ns, name, ok := strings.Cut(c.NodeService, "/"); ok {
		return ns, name, nil
	}
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
		if err != nil {
			return "", "", errors.New("--node-service names no namespace, and neither $POD_NAMESPACE nor the service account says one")
		}
		ns = strings.TrimSpace(string(b))
	}
	return ns, c.NodeService, nil
}

func (c *roleConfig) kubeConfig() (*rest.Config, error) {
	if c.KubeAPI == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("--discovery=kubernetes: not in a cluster (%w); give --kube-api and --kube-token-file", err)
		}
		return rc, nil
	}
	tok, err := os.ReadFile(c.KubeToken)
	if err != nil {
		return nil, fmt.Errorf("--kube-token-file: %w", err)
	}
	return &rest.Config{Host: c.KubeAPI, BearerToken: strings.TrimSpace(string(tok)),
		TLSClientConfig: rest.TLSClientConfig{CAFile: c.KubeCA}}, nil
}

// discovered is a discovery source as the gateway's node set: each node
// at http://its address, names the gateway cannot use left out (logged
// once each).
type discovered struct {
	src    discovery.Source
	log    *slog.Logger
	warned sync.Map
}

func (d *discovered) Nodes() []gateway.Node {
	found, _ := d.src.Nodes()
	out := make([]gateway.Node, 0, len(found))
	tags := map[string]string{}
	for _, f := range found {
		n, err := gateway.NewNode(f.Name, "http://"+f.Addr)
		if err == nil {
			if other, dup := tags[gateway.Tag(n.Name)]; dup {
				err = fmt.Errorf("nodes %q and %q share the tag %s", other, n.Name, gateway.Tag(n.Name))
			}
		}
		if err != nil {
			if _, seen := d.warned.LoadOrStore(f, true); !seen {
				d.log.Warn("a discovered node is left out", "node", f.Name, "addr", f.Addr, "error", err)
			}
			continue
		}
		tags[gateway.Tag(n.Name)] = n.Name
		out = append(out, n)
	}
	return out
}

// runDiscovery keeps src current until ctx ends.
func runDiscovery(ctx context.Context, src discovery.Source, logger *slog.Logger) {
	if src == nil {
		return
	}
	go func() {
		if err := src.Run(ctx); err != nil && ctx.Err() == nil {
			logger.Error("node discovery stopped: the gateway keeps the last node set it had", "error", err)
		}
	}()
}

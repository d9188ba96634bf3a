// Package kubernetes holds Paddock's Kubernetes deployment: a kustomize
// base (base/) and its overlays (overlays/dev, overlays/production). It
// has no code; its tests render every overlay with kustomize's own
// library, decode each object strictly into its k8s.io/api type and check
// what the tier relies on (labels and selectors, probes, resources, the
// node's privileges, RBAC that only reads, the NetworkPolicy), and apply
// the result to a real API server with a server-side dry run.
//
// Nothing may import it; its tests import only k8s.io modules, kustomize
// and internal/kubetest.
package kubernetes

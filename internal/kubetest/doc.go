// Package kubetest starts a real Kubernetes API server for tests: etcd and
// kube-apiserver on loopback, in a temporary directory, with serving
// certificates made for the run and a static bearer token that belongs to
// system:masters. Tests get a *rest.Config for it.
//
// The binaries are built from the Go module proxy by `make apiserver` (part of
// `make test-deps`) into the cache; PADDOCK_K8S_BIN names their directory.
// Without them a test skips, saying how to build them, unless
// PADDOCK_REQUIRE_K8S=1 (set by `make test`), where it fails.
//
// It is test support only: no production package may import it. It imports
// only the standard library and k8s.io/client-go's rest package.
package kubetest

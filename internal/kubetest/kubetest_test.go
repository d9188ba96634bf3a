package kubetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestServer starts the real servers and uses the API as the token's
// system:masters user, and checks that the API refuses a caller without
// the token.
func TestServer(t *testing.T) {
	s := Start(t)
	cs, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubetest"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	got, err := cs.CoreV1().Namespaces().Get(ctx, "kubetest", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading it back: %v", err)
	}
	if got.Name != "kubetest" {
		t.Fatalf("namespace name = %q, want kubetest", got.Name)
	}

	anon := rest.CopyConfig(s.Config)
	anon.BearerToken = ""
	acs, err := kubernetes.NewForConfig(anon)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acs.CoreV1().Namespaces().Get(ctx, "kubetest", metav1.GetOptions{}); err == nil {
		t.Fatal("an anonymous caller read a namespace")
	}
}

func TestLookBinaries(t *testing.T) {
	dir := t.TempDir()
	if _, err := lookBinaries(""); err == nil || !strings.Contains(err.Error(), "PADDOCK_K8S_BIN") {
		t.Errorf("no dir: err = %v, want one naming PADDOCK_K8S_BIN", err)
	}
	if _, err := lookBinaries(dir); err == nil {
		t.Error("empty dir: no error")
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := lookBinaries(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.APIServer != dir+"/kube-apiserver" || b.Etcd != dir+"/etcd" {
		t.Errorf("binaries = %+v", b)
	}
	if err := os.Chmod(filepath.Join(dir, "etcd"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lookBinaries(dir); err == nil || !strings.Contains(err.Error(), "not executable") {
		t.Errorf("non-executable etcd: err = %v", err)
	}
}

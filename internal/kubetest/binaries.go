package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Binaries are the programs a Server runs.
type Binaries struct {
	APIServer string
	Etcd      string
}

// FindBinaries returns the binaries in the directory PADDOCK_K8S_BIN names.
// When one is missing the test is skipped, or failed under
// PADDOCK_REQUIRE_K8S=1.
func FindBinaries(t testing.TB) Binaries {
	t.Helper()
	b, err := lookBinaries(os.Getenv("PADDOCK_K8S_BIN"))
	if err == nil {
		return b
	}
	msg := fmt.Sprintf("no real Kubernetes API server: %v (build it with `make apiserver`; make exports PADDOCK_K8S_BIN)", err)
	if os.Getenv("PADDOCK_REQUIRE_K8S") == "1" {
		t.Fatal(msg + "; PADDOCK_REQUIRE_K8S=1 makes this a failure")
	}
	t.Skip(msg)
	return Binaries{}
}

func lookBinaries(dir string) (Binaries, error) {
	if dir == "" {
		return Binaries{}, fmt.Errorf("PADDOCK_K8S_BIN is not set")
	}
	b := Binaries{
		APIServer: filepath.Join(dir, "kube-apiserver"),
		Etcd:      filepath.Join(dir, "etcd"),
	}
	for _, p := range []string{b.APIServer, b.Etcd} {
		fi, err := os.Stat(p)
		if err != nil {
			return Binaries{}, err
		}
		if fi.Mode()&0o111 == 0 {
			return Binaries{}, fmt.Errorf("%s is not executable", p)
		}
	}
	return b, nil
}

package kubetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// startTimeout bounds the whole start of etcd and kube-apiserver. It is a
// guard against a hang, not a measure: readiness is polled, and the wait
// ends as soon as both answer.
const startTimeout = 3 * time.Minute

// Server is a running etcd and kube-apiserver.
type Server struct {
	// Config reaches the API server as a member of system:masters.
	Config *rest.Config
	// Dir holds the certificates, the data and both logs.
	Dir string

	etcd, apiserver *process
}

// Start starts a server for the test and stops it when the test ends. It
// skips (or fails, under PADDOCK_REQUIRE_K8S=1) when the binaries are
// missing.
func Start(t testing.TB) *Server {
	t.Helper()
	bins := FindBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := StartServer(ctx, bins, t.TempDir())
	if err != nil {
		t.Fatalf("starting a Kubernetes API server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping the Kubernetes API server: %v", err)
		}
	})
	return s
}

// StartServer starts etcd and kube-apiserver with their files in dir and
// returns once kube-apiserver's /readyz answers ok. On failure what was
// started is stopped again.
func StartServer(ctx context.Context, bins Binaries, dir string) (*Server, error) {
	p, err := newPKI(dir)
	if err != nil {
		return nil, fmt.Errorf("making certificates: %w", err)
	}
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	tokenFile := filepath.Join(dir, "tokens.csv")
	// token,user,uid,"groups"
	line := token + `,paddock-test,paddock-test,"system:masters"` + "\n"
	if err := os.WriteFile(tokenFile, []byte(line), 0o600); err != nil {
		return nil, err
	}

	s := &Server{Dir: dir}
	etcdURL, err := s.startEtcd(ctx, bins.Etcd)
	if err != nil {
		return nil, err
	}
	host, err := s.startAPIServer(ctx, bins.APIServer, etcdURL, p, tokenFile, token)
	if err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	s.Config = &rest.Config{
		Host:            host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM},
	}
	return s, nil
}

// Stop stops kube-apiserver, then etcd.
func (s *Server) Stop() error {
	var errs []error
	for _, p := range []*process{s.apiserver, s.etcd} {
		if p != nil {
			errs = append(errs, p.stop(30*time.Second))
		}
	}
	return errors.Join(errs...)
}

// freePort returns a loopback port nothing listens on now. Another
// process can take it before the server binds it: a server that exits
// at once is started again on new ports (see startRetrying).
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

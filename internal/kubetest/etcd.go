package kubetest

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
)

// startAttempts is how often a server whose ports were taken first is
// started again on new ones.
const startAttempts = 3

// startEtcd starts a single-member etcd on two loopback ports and returns
// its client URL once /health says so.
func (s *Server) startEtcd(ctx context.Context, bin string) (string, error) {
	var err error
	for range startAttempts {
		var client, peer string
		if client, err = freePort(); err != nil {
			return "", err
		}
		if peer, err = freePort(); err != nil {
			return "", err
		}
		clientURL := "http://127.0.0.1:" + client
		peerURL := "http://127.0.0.1:" + peer
		var p *process
		p, err = startProcess(s.Dir, "etcd", bin,
			"--name=kubetest",
			"--data-dir="+filepath.Join(s.Dir, "etcd"),
			"--listen-client-urls="+clientURL,
			"--advertise-client-urls="+clientURL,
			"--listen-peer-urls="+peerURL,
			"--initial-advertise-peer-urls="+peerURL,
			"--initial-cluster=kubetest="+peerURL,
			// A test's data need not survive a power cut.
			"--unsafe-no-fsync",
			"--log-level=warn",
		)
		if err != nil {
			return "", err
		}
		c := &http.Client{}
		err = waitReady(ctx, p, func(ctx context.Context) error {
			return getOK(ctx, c, clientURL+"/health", "", `"health":"true"`)
		})
		if err == nil {
			s.etcd = p
			return clientURL, nil
		}
		_ = p.stop(0)
		if !portTaken(p) {
			break
		}
	}
	return "", fmt.Errorf("starting etcd: %w", err)
}

// portTaken reports whether a process that exited failed to bind.
func portTaken(p *process) bool {
	select {
	case <-p.done:
		return strings.Contains(p.tail(), "address already in use")
	default:
		return false
	}
}

package kubetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"path/filepath"
)

// startAPIServer starts kube-apiserver on a loopback port, storing in etcd
// at etcdURL, and returns its URL once /readyz answers ok.
func (s *Server) startAPIServer(ctx context.Context, bin, etcdURL string, p *pki, tokenFile, token string) (string, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer c.CloseIdleConnections()
	var err error
	for range startAttempts {
		var port string
		if port, err = freePort(); err != nil {
			return "", err
		}
		host := "https://127.0.0.1:" + port
		var proc *process
		proc, err = startProcess(s.Dir, "kube-apiserver", bin,
			"--etcd-servers="+etcdURL,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			// The kubernetes Service's endpoints may not be on loopback,
			// and nothing here needs them.
			"--endpoint-reconciler-type=none",
			"--secure-port="+port,
			"--tls-cert-file="+p.certFile,
			"--tls-private-key-file="+p.keyFile,
			"--cert-dir="+filepath.Join(s.Dir, "certs"),
			"--token-auth-file="+tokenFile,
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file="+p.saPubFile,
			"--service-account-signing-key-file="+p.saKeyFile,
			// Addresses are only allocated, never routed: nothing on this
			// host sends to them.
			"--service-cluster-ip-range=10.0.0.0/24",
			"--allow-privileged=true",
		)
		if err != nil {
			return "", err
		}
		err = waitReady(ctx, proc, func(ctx context.Context) error {
			return getOK(ctx, c, host+"/readyz", token, "ok")
		})
		if err == nil {
			s.apiserver = proc
			return host, nil
		}
		_ = proc.stop(0)
		if !portTaken(proc) {
			break
		}
	}
	return "", fmt.Errorf("starting kube-apiserver: %w", err)
}

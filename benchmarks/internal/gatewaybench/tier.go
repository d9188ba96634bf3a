package gatewaybench

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/gateway"
)

// nodeNames are the tier's nodes; the first is also the one measured
// alone.
var nodeNames = []string{"n1", "n2", "n3"}

// tier is the phase's processes and the secrets they share.
type tier struct {
	nodes   []*server.Server
	gateway *server.Server
	dir     string
}

// secretFile writes 48 random bytes, base64, to a file in dir.
func secretFile(dir, name string) (string, error) {
	b := make([]byte, 48)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, []byte(base64.StdEncoding.EncodeToString(b)+"\n"), 0o600)
}

// startTier starts the nodes one after another (each once its pool is
// restored, so that the first builds the snapshot the others restore
// from), then the gateway, and waits until the gateway sees every node.
func startTier(ctx context.Context, o bench.Options) (_ *tier, err error) {
	dir, err := os.MkdirTemp("", "paddock-bench-gateway-")
	if err != nil {
		return nil, err
	}
	t := &tier{dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, t.stop(ctx, nil))
		}
	}()
	credFile, err := secretFile(dir, "node.secret")
	if err != nil {
		return nil, err
	}
	jwtFile, err := secretFile(dir, "jwt.secret")
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(credFile)
	if err != nil {
		return nil, err
	}
	cred, err := gateway.NewCredential([]byte(strings.TrimRight(string(raw), "\n")), nil)
	if err != nil {
		return nil, err
	}
	token, err := mintToken(ctx, o.Paddock, jwtFile)
	if err != nil {
		return nil, err
	}
	auth := []string{"--node-credential-file=" + credFile, "--jwt-hs256-secret-file=" + jwtFile}
	var list []string
	python, _ := langs.ByName("python")
	for _, name := range nodeNames {
		bench.Progress("  starting node %s (python pool %d)", name, o.GatewayPool)
		s, err := server.Start(ctx, o, server.Config{Name: "gateway phase node " + name, Templates: []string{"python"},
			Pool: o.GatewayPool, Snapshots: true,
			Extra: append([]string{"--role=node", "--node-name=" + name}, auth...),
			Wrap:  func(rt http.RoundTripper) http.RoundTripper { return signer{rt, cred, token} }})
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", name, err)
		}
		t.nodes = append(t.nodes, s)
		if err := s.AwaitRestoredPool(ctx, python, server.RestoreTimeout); err != nil {
			return nil, fmt.Errorf("node %s: %w", name, err)
		}
		list = append(list, name+"="+s.URL())
	}
	t.gateway, err = server.Start(ctx, o, server.Config{Name: "gateway phase gateway", Templates: []string{"python"},
		Pool: o.GatewayPool, Snapshots: true,
		Extra: append([]string{"--role=gateway", "--nodes=" + strings.Join(list, ",")}, auth...),
		Wrap:  func(rt http.RoundTripper) http.RoundTripper { return signer{rt, nil, token} }})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return t, awaitNodesUp(ctx, t.gateway, len(nodeNames))
}

// stop ends the gateway, then the nodes (keeping their pool metrics in
// rep when given), and removes the secrets.
func (t *tier) stop(ctx context.Context, rep *report.Report) error {
	var errs []error
	if t.gateway != nil {
		errs = append(errs, t.gateway.Stop())
	}
	for _, n := range t.nodes {
		if rep != nil {
			errs = append(errs, n.Finish(ctx, rep))
		} else {
			errs = append(errs, n.Stop())
		}
	}
	errs = append(errs, os.RemoveAll(t.dir))
	return errors.Join(errs...)
}

// mintToken is a bearer JWT for tenant "bench", from `paddock token`;
// admin too, for the pool metrics the bench reads.
func mintToken(ctx context.Context, paddock, secretFile string) (string, error) {
	out, err := exec.CommandContext(ctx, paddock, "token", "--jwt-hs256-secret-file="+secretFile, "--subject=bench", "--scopes=run,sessions,admin", "--ttl=24h").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("paddock token: %w: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("paddock token: %w", err)
	}
	tok := strings.TrimSpace(string(out))
	if tok == "" || strings.ContainsAny(tok, " \n") {
		return "", fmt.Errorf("paddock token printed %q, not one token", out)
	}
	return tok, nil
}

// signer adds the bearer token to every request and, with a credential,
// signs it as a gateway would, so that a node serves it directly.
type signer struct {
	next  http.RoundTripper
	cred  *gateway.Credential
	token string
}

func (s signer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+s.token)
	if s.cred != nil {
		s.cred.Sign(r, "")
	}
	return s.next.RoundTrip(r)
}

package main

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/paddock-dev/paddock/egress"
)

// loadSecrets reads --egress-secrets: a JSON object of hosts, each an
// object of header names and values, in a file only its owner may read
// or write. Every host must be an exact name the allowance pol lets a
// run reach. An empty path is no secrets.
func loadSecrets(path string, pol egress.Policy) (map[string]http.Header, error) {
	if path == "" {
		return nil, nil
	}
	b, err := readPrivate(path)
	if err != nil {
		return nil, fmt.Errorf("--egress-secrets: %w", err)
	}
	var raw map[string]map[string]string
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("--egress-secrets: %s is not a JSON object of hosts, each an object of header names and string values "+
			`({"api.example.com": {"Authorization": "Bearer …"}}): %w`, path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("--egress-secrets: %s holds more than one JSON value", path)
	}
	out := make(map[string]http.Header, len(raw))
	for _, host := range slices.Sorted(maps.Keys(raw)) {
		switch {
		case strings.HasPrefix(host, "*"):
			return nil, fmt.Errorf("--egress-secrets: %q: a secret's host is an exact name, not a wildcard", host)
		case !pol.CoversHost(host):
			return nil, fmt.Errorf("--egress-secrets: %q is not a host the allowance covers (--egress-allow %q, less --egress-deny): "+
				"a secret goes only to a host runs may reach", host, pol.String())
		}
		h := http.Header{}
		for k, v := range raw[host] {
			h[http.CanonicalHeaderKey(k)] = []string{v}
		}
		out[host] = h
	}
	// The proxy checks the headers themselves; check them now, at start.
	if _, err := egress.New(egress.Config{Secrets: out}); err != nil {
		return nil, fmt.Errorf("--egress-secrets: %w", err)
	}
	return out, nil
}

// readPrivate reads a regular file that neither its group nor others may
// read or write.
func readPrivate(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s is open to its group or others (mode %04o): it holds credentials; chmod 600 it", path, perm)
	}
	return io.ReadAll(f)
}

// loadRoots reads --egress-secrets-ca: PEM certificates; an empty path
// is nil, the system's roots.
func loadRoots(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--egress-secrets-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("--egress-secrets-ca: " + path + " holds no PEM certificate")
	}
	return pool, nil
}

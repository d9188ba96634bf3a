package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestEgressSecretsFile(t *testing.T) {
	allow := "api.test pkg.test:8443 *.cdn.test"
	tests := []struct {
		name, allow, body string
		mode              os.FileMode
		want              string // in the error; "" for none
	}{
		{name: "fine", body: `{"api.test": {"authorization": "Bearer t"}, "PKG.test": {"X-Api-Key": "k"}}`, mode: 0o600},
		{name: "owner read only", body: `{"api.test": {"X-Api-Key": "k"}}`, mode: 0o400},
		{name: "group readable", body: `{"api.test": {"X-Api-Key": "k"}}`, mode: 0o640, want: "open to its group or others (mode 0640): it holds credentials; chmod 600 it"},
		{name: "world readable", body: `{"api.test": {"X-Api-Key": "k"}}`, mode: 0o604, want: "(mode 0604)"},
		{name: "group writable", body: `{"api.test": {"X-Api-Key": "k"}}`, mode: 0o620, want: "(mode 0620)"},
		{name: "not JSON", body: `api.test: x`, mode: 0o600, want: "is not a JSON object of hosts"},
		{name: "a value not a string", body: `{"api.test": {"X-Api-Key": 1}}`, mode: 0o600, want: "is not a JSON object of hosts"},
		{name: "two values", body: `{} {}`, mode: 0o600, want: "more than one JSON value"},
		{name: "host not allowed", body: `{"evil.test": {"X-Api-Key": "k"}}`, mode: 0o600, want: `"evil.test" is not a host the allowance covers (--egress-allow "allow api.test:80,443`},
		{name: "wildcard host", body: `{"*.cdn.test": {"X-Api-Key": "k"}}`, mode: 0o600, want: "an exact name, not a wildcard"},
		{name: "bad header", body: `{"api.test": {"X Key": "k"}}`, mode: 0o600, want: `"X Key" is not a header name`},
		{name: "injection", body: `{"api.test": {"X-Key": "k\r\nX-Evil: 1"}}`, mode: 0o600, want: "control character"},
		{name: "no hosts allowed", allow: "-", body: `{"api.test": {"X-Api-Key": "k"}}`, mode: 0o600, want: "no host is allowed (--egress-allow is empty)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "secrets.json")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			cfg := &config{EgressAllow: allow, EgressSecrets: path, EgressMaxConns: 1, EgressMaxMB: 1, EgressRateMB: 1}
			if tc.allow == "-" {
				cfg.EgressAllow = ""
			}
			eg, err := egressConfig(cfg, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "--egress-secrets: ") {
					t.Fatalf("egressConfig = %v, want an --egress-secrets error saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := eg.Secrets["api.test"]; tc.name == "fine" && (got.Get("Authorization") != "Bearer t" || eg.Secrets["PKG.test"].Get("X-Api-Key") != "k") {
				t.Errorf("secrets %v", eg.Secrets)
			}
		})
	}
}

func TestEgressSecretsCA(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadRoots(bad); err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Errorf("loadRoots(no PEM) = %v", err)
	}
	if _, err := loadRoots(filepath.Join(dir, "missing.pem")); err == nil || !strings.HasPrefix(err.Error(), "--egress-secrets-ca: ") {
		t.Errorf("loadRoots(missing) = %v", err)
	}
	if pool, err := loadRoots(""); pool != nil || err != nil {
		t.Errorf("loadRoots(\"\") = %v, %v; want the system's (nil)", pool, err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The role flags: what each role needs, and the id prefix a node name
// gives.
func TestRoleFlags(t *testing.T) {
	clearAuthEnv(t)
	for _, k := range []string{"PADDOCK_ROLE", "PADDOCK_NODE_NAME", "PADDOCK_NODE_CREDENTIAL_FILE", "PADDOCK_NODES"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	good, short := filepath.Join(dir, "good"), filepath.Join(dir, "short")
	if err := os.WriteFile(good, []byte(strings.Repeat("k", 40)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		errHas string // "" = valid
		prefix string
	}{
		{name: "all by default", args: nil},
		{name: "all with a name tags its ids", args: []string{"--node-name=n1"}, prefix: "d5529766"},
		{name: "node", args: []string{"--role=node", "--node-name=n2", "--node-credential-file=" + good}, prefix: "8fd3b076"},
		{name: "node without name", args: []string{"--role=node", "--node-credential-file=" + good}, errHas: "--role=node needs --node-name"},
		{name: "node with a bad name", args: []string{"--role=node", "--node-name=N_1", "--node-credential-file=" + good}, errHas: "DNS name"},
		{name: "node without credential", args: []string{"--role=node", "--node-name=n1"}, errHas: "needs --node-credential-file"},
		{name: "short credential", args: []string{"--role=node", "--node-name=n1", "--node-credential-file=" + short}, errHas: "at least 32"},
		{name: "gateway", args: []string{"--role=gateway", "--runsc=", "--nodes=n1=http://127.0.0.1:1", "--node-credential-file=" + good}},
		{name: "gateway without nodes", args: []string{"--role=gateway", "--node-credential-file=" + good}, errHas: "needs --nodes"},
		{name: "gateway with a bad node", args: []string{"--role=gateway", "--nodes=n1", "--node-credential-file=" + good}, errHas: "want name=url"},
		{name: "unknown role", args: []string{"--role=edge"}, errHas: "want all, node or gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := serveConfig(t, tt.args...)
			if tt.errHas == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if got := cfg.idPrefix(); got != tt.prefix {
					t.Errorf("idPrefix = %q, want %q", got, tt.prefix)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("Validate = %v, want an error with %q", err, tt.errHas)
			}
		})
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// paddock mcp refuses what it cannot use before touching stdin.
func TestMCPCmdRefuses(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PADDOCK_URL", "")
	t.Setenv("PADDOCK_TOKEN_FILE", "")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not http", []string{"--url=ftp://example.com/mcp"}, `--url "ftp://example.com/mcp" is not an http or https URL`},
		{"no host", []string{"--url=http:///mcp"}, `--url "http:///mcp" is not an http or https URL`},
		{"arguments", []string{"extra"}, `unexpected arguments ["extra"]`},
		{"empty token file", []string{"--token-file=" + empty}, "--token-file: the file is empty"},
		{"missing token file", []string{"--token-file=" + empty + ".no"}, "--token-file: open " + empty + ".no: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mcpCmd(t.Context(), tc.args)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("mcpCmd(%q) = %v, want %s", tc.args, err, tc.want)
			}
		})
	}
}

func TestMCPServeFlags(t *testing.T) {
	clearAuthEnv(t)
	t.Setenv("PADDOCK_MCP_ALLOWED_HOSTS", "a.example")
	cfg, err := serveConfig(t, "--mcp-session-idle=90s")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.AllowedHosts; len(got) != 1 || got[0] != "a.example" || cfg.MCPSessionIdle.String() != "1m30s" {
		t.Fatalf("allowed hosts %q, idle %s", got, cfg.MCPSessionIdle)
	}
	cfg, err = serveConfig(t, "--mcp-allowed-hosts=b.example,c.example:443")
	if err != nil || len(cfg.AllowedHosts) != 2 || cfg.AllowedHosts[1] != "c.example:443" {
		t.Fatalf("flag over env: %v %q", err, cfg.AllowedHosts)
	}
	if _, err := serveConfig(t, "--mcp-session-idle=10ms"); err == nil || !strings.Contains(err.Error(), "--mcp-session-idle must be at least 1s") {
		t.Fatalf("10ms idle: %v", err)
	}
}

func TestGuardFlags(t *testing.T) {
	clearAuthEnv(t)
	t.Setenv("PADDOCK_ALLOWED_ORIGINS", "https://lab.example.com")
	cfg, err := serveConfig(t, "--allowed-hosts=paddock.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.AllowedHosts) != 1 || cfg.AllowedHosts[0] != "paddock.example.com" || len(cfg.AllowedOrigins) != 1 || cfg.guard == nil {
		t.Fatalf("hosts %q origins %q guard %v", cfg.AllowedHosts, cfg.AllowedOrigins, cfg.guard)
	}
	if _, err := serveConfig(t, "--allowed-origins=lab.example.com"); err == nil || !strings.Contains(err.Error(), "want scheme://host[:port]") {
		t.Fatalf("origin without a scheme: %v", err)
	}
}

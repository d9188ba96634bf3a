package main

import "testing"

func TestTenantMaxConnectionsFlag(t *testing.T) {
	clearAuthEnv(t)
	tests := []struct {
		name    string
		args    []string
		want    int
		wantErr string
	}{
		{"default", nil, 32, ""},
		{"set", []string{"--tenant-max-connections=3"}, 3, ""},
		{"off", []string{"--tenant-max-connections=-1"}, -1, ""},
		{"zero", []string{"--tenant-max-connections=0"}, 0, "--tenant-max-connections must be at least 1, or negative for no limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := serveConfig(t, tc.args...)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v, want nil", err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Fatalf("Validate: %v\nwant      %s", err, tc.wantErr)
			}
			if cfg.TenantMaxConnections != tc.want {
				t.Errorf("TenantMaxConnections = %d, want %d", cfg.TenantMaxConnections, tc.want)
			}
		})
	}
}

package api_test

import (
	"encoding/json"
	"fmt"
	"github.com/paddock-dev/paddock/core"
	"net/http"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

const mib = 1 << 20

// limitedPool has a python template with every limit set, pooled, with a
// warm-up, as the server configures it.
var limitedPool = pool.Config{Templates: []pool.Template{{
	Name: "python", Size: 1,
	Spec: runner.Spec{Language: "python", Warmup: "import numpy",
		Limits: runner.Limits{MemoryBytes: 512 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024}},
}}}

// A request's limits reach the spec the sandbox is started with; the
// template's own values, or none, take the pool.
func TestRunLimits(t *testing.T) {
	tests := []struct {
		name       string
		limits     string
		wantStart  string
		wantLimits runner.Limits
	}{
		{name: "none", limits: ``, wantStart: "pool",
			wantLimits: runner.Limits{MemoryBytes: 512 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024}},
		{name: "empty object", limits: `,"limits":{}`, wantStart: "pool",
			wantLimits: runner.Limits{MemoryBytes: 512 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024}},
		{name: "null", limits: `,"limits":null`, wantStart: "pool",
			wantLimits: runner.Limits{MemoryBytes: 512 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024}},
		{name: "the template's values", limits: `,"limits":{"memory_mb":512,"processes":64,"cpus":1,"disk_mb":256,"open_files":1024}`, wantStart: "pool",
			wantLimits: runner.Limits{MemoryBytes: 512 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024}},
		{name: "memory", limits: `,"limits":{"memory_mb":128}`, wantStart: "cold",
			wantLimits: runner.Limits{MemoryBytes: 128 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024}},
		{name: "null field keeps the template's", limits: `,"limits":{"memory_mb":null,"processes":16}`, wantStart: "cold",
			wantLimits: runner.Limits{MemoryBytes: 512 * mib, Processes: 16, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024}},
		{name: "the minima", limits: `,"limits":{"memory_mb":64,"processes":16,"cpus":0.25,"disk_mb":16,"open_files":64}`, wantStart: "cold",
			wantLimits: runner.Limits{MemoryBytes: 64 * mib, Processes: 16, CPUs: 0.25, DiskBytes: 16 * mib, OpenFiles: 64}},
		{name: "the default maxima", limits: `,"limits":{"memory_mb":2048,"processes":256,"cpus":2,"disk_mb":2048,"open_files":4096}`, wantStart: "cold",
			wantLimits: runner.Limits{MemoryBytes: 2048 * mib, Processes: 256, CPUs: 2, DiskBytes: 2048 * mib, OpenFiles: 4096}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &runnertest.Runtime{}
			f := newFixture(t, rt, limitedPool, api.Config{}, true)
			rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"print(1)"`+tc.limits+`}`)
			var got struct {
				Warm      bool   `json:"warm"`
				Start     string `json:"start"`
				SandboxID string `json:"sandbox_id"`
				Reason    string `json:"reason"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("status %d, body %s, err %v", rec.Code, rec.Body, err)
			}
			if got.Start != tc.wantStart || got.Warm != (tc.wantStart == "pool") || got.Reason != "ok" {
				t.Errorf("start, warm, reason = %q, %v, %q; want %q, %v, ok", got.Start, got.Warm, got.Reason, tc.wantStart, tc.wantStart == "pool")
			}
			var spec runner.Spec
			for _, sb := range rt.Sandboxes() {
				if sb.ID() == got.SandboxID {
					spec = sb.Spec
				}
			}
			if spec.Limits != tc.wantLimits {
				t.Errorf("sandbox %s started with %+v, want %+v", got.SandboxID, spec.Limits, tc.wantLimits)
			}
			if wantWarmup := map[string]string{"pool": "import numpy", "cold": ""}[tc.wantStart]; spec.Warmup != wantWarmup {
				t.Errorf("sandbox %s started with warm-up %q, want %q", got.SandboxID, spec.Warmup, wantWarmup)
			}
		})
	}
}

func TestRunLimitsValidation(t *testing.T) {
	rt := &runnertest.Runtime{}
	f := newFixture(t, rt, limitedPool, api.Config{Config: core.Config{TenantRate: -1, MaxMemoryMB: 1024, MaxCPUs: 1.5}}, true)
	body := func(limits string) string { return `{"language":"python","code":"x","limits":` + limits + `}` }
	tests := []struct {
		name        string
		body        string
		wantCode    string
		wantMessage string
	}{
		{"memory below the minimum", body(`{"memory_mb":63}`), "invalid_request", "limits.memory_mb must be between 64 and 1024 (MiB); got 63"},
		{"memory over the maximum", body(`{"memory_mb":1025}`), "invalid_request", "limits.memory_mb must be between 64 and 1024 (MiB); got 1025"},
		{"memory zero", body(`{"memory_mb":0}`), "invalid_request", "limits.memory_mb must be between 64 and 1024 (MiB); got 0"},
		{"memory negative", body(`{"memory_mb":-512}`), "invalid_request", "limits.memory_mb must be between 64 and 1024 (MiB); got -512"},
		{"processes below the minimum", body(`{"processes":15}`), "invalid_request", "limits.processes must be between 16 and 256 (processes and threads); got 15"},
		{"processes over the maximum", body(`{"processes":257}`), "invalid_request", "limits.processes must be between 16 and 256 (processes and threads); got 257"},
		{"cpus zero", body(`{"cpus":0}`), "invalid_request", "limits.cpus must be between 0.25 and 1.5 (cores); got 0"},
		{"cpus below the minimum", body(`{"cpus":0.2}`), "invalid_request", "limits.cpus must be between 0.25 and 1.5 (cores); got 0.2"},
		{"cpus over the maximum", body(`{"cpus":1.51}`), "invalid_request", "limits.cpus must be between 0.25 and 1.5 (cores); got 1.51"},
		{"disk below the minimum", body(`{"disk_mb":15}`), "invalid_request", "limits.disk_mb must be between 16 and 2048 (MiB); got 15"},
		{"disk over the maximum", body(`{"disk_mb":4096}`), "invalid_request", "limits.disk_mb must be between 16 and 2048 (MiB); got 4096"},
		{"open files below the minimum", body(`{"open_files":10}`), "invalid_request", "limits.open_files must be between 64 and 4096 (per process); got 10"},
		{"open files over the maximum", body(`{"open_files":1048576}`), "invalid_request", "limits.open_files must be between 64 and 4096 (per process); got 1048576"},
		{"huge integer", body(`{"memory_mb":99999999999999999999}`), "invalid_json", `field "limits.memory_mb" must be an integer, got number 99999999999999999999`},
		{"fractional memory", body(`{"memory_mb":128.5}`), "invalid_json", `field "limits.memory_mb" must be an integer, got number 128.5`},
		{"memory a string", body(`{"memory_mb":"128"}`), "invalid_json", `field "limits.memory_mb" must be an integer, got string`},
		{"cpus a string", body(`{"cpus":"1"}`), "invalid_json", `field "limits.cpus" must be a number, got string`},
		{"limits an array", body(`[128]`), "invalid_json", `field "limits" must be an object, got array`},
		{"unknown limit", body(`{"memory":128}`), "unknown_field", `unknown field "memory"`},
		{"timeout is not a limit here", body(`{"timeout_ms":1000}`), "unknown_field", `unknown field "timeout_ms"`},
		{"duplicate limit", body(`{"memory_mb":128,"memory_mb":2048}`), "duplicate_key", `duplicate key "memory_mb" in limits: each key may appear once per object`},
		{"duplicate limit in another case", body(`{"disk_mb":32,"Disk_MB":2048}`), "duplicate_key", `duplicate key "Disk_MB" in limits (the same field as "disk_mb"): each key may appear once per object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do(t, http.MethodPost, "/v1/run", tc.body)
			want := fmt.Sprintf(`{"code":%q,"message":%s}`+"\n", tc.wantCode, jsonString(t, tc.wantMessage))
			checkResponse(t, rec, http.StatusBadRequest, want)
		})
	}
	if got := rt.Starts(); got != 1 {
		t.Errorf("Starts = %d, want 1 (the pooled sandbox): a refused request started a sandbox", got)
	}
	if got := rt.Sandboxes()[0].Runs(); got != 0 {
		t.Errorf("a refused request reached a sandbox: Runs = %d", got)
	}
}

func TestTemplatesShowRequestLimits(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{Config: core.Config{MaxTimeout: 30 * time.Second, MaxMemoryMB: 4096, MaxProcesses: 128, MaxCPUs: 4, MaxDiskMB: 1024, MaxOpenFiles: 2048}}, true)
	rec := f.do(t, http.MethodGet, "/v1/templates", "")
	var got struct {
		MinLimits map[string]any `json:"min_limits"`
		MaxLimits map[string]any `json:"max_limits"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("status %d, body %s, err %v", rec.Code, rec.Body, err)
	}
	wantMin := map[string]any{"memory_mb": 64.0, "processes": 16.0, "cpus": 0.25, "disk_mb": 16.0, "open_files": 64.0, "timeout_ms": 1.0}
	wantMax := map[string]any{"memory_mb": 4096.0, "processes": 128.0, "cpus": 4.0, "disk_mb": 1024.0, "open_files": 2048.0, "timeout_ms": 30000.0}
	if fmt.Sprint(got.MinLimits) != fmt.Sprint(wantMin) {
		t.Errorf("min_limits = %v, want %v", got.MinLimits, wantMin)
	}
	if fmt.Sprint(got.MaxLimits) != fmt.Sprint(wantMax) {
		t.Errorf("max_limits = %v, want %v", got.MaxLimits, wantMax)
	}
}

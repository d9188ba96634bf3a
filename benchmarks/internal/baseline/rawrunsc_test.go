package baseline

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
	"github.com/paddock-dev/paddock/runner/runsc"
	"github.com/paddock-dev/paddock/templates"
)

func TestRawSpecHasPaddocksLimitsAndTheInterpreter(t *testing.T) {
	tmpl, err := templates.Get("python")
	if err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{agentDir: "/agent", spec: runner.Spec{Template: "python", Language: "python", Rootfs: "/rootfs", Limits: TemplateLimits(tmpl.Limits)}}
	argv := []string{"python3", "-c", "print(1)"}
	got := rt.rawSpec("raw-0123456789abcdef", argv)

	// The template ships 512 MiB, 1 CPU, 64 processes, 256 MiB of disk and
	// 1024 open files; Paddock caps the Sentry's host pids at 4096.
	r := got.Linux.Resources
	if *r.Memory.Limit != 536870912 || *r.Memory.Swap != 536870912 || *r.CPU.Quota != 100000 || *r.CPU.Period != 100000 || *r.Pids.Limit != 4096 {
		t.Errorf("resources: memory %d swap %d, cpu %d/%d, pids %d", *r.Memory.Limit, *r.Memory.Swap, *r.CPU.Quota, *r.CPU.Period, *r.Pids.Limit)
	}
	if got.Linux.CgroupsPath != "/paddock/raw-0123456789abcdef" {
		t.Errorf("cgroups path %q", got.Linux.CgroupsPath)
	}
	wantRlimits := []specs.POSIXRlimit{{Type: "RLIMIT_NPROC", Hard: 64, Soft: 64}, {Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}}
	if !reflect.DeepEqual(got.Process.Rlimits, wantRlimits) {
		t.Errorf("rlimits %+v", got.Process.Rlimits)
	}
	if !slices.Equal(got.Process.Args, argv) || got.Process.User.UID != 1000 || got.Process.User.GID != 1000 ||
		got.Process.Cwd != "/workspace" || got.Process.Capabilities != nil || !got.Process.NoNewPrivileges {
		t.Errorf("process %+v", got.Process)
	}
	tmp := slices.IndexFunc(got.Mounts, func(m specs.Mount) bool { return m.Destination == "/tmp" })
	if tmp < 0 || !slices.Contains(got.Mounts[tmp].Options, "size=268435456") {
		t.Errorf("mounts %+v", got.Mounts)
	}
	if flags := runsc.CreateFlags(rt.spec); !slices.Equal(flags, []string{"--network=none", "--overlay2=root:self,size=268435456"}) {
		t.Errorf("create flags %q", flags)
	}
	// Everything but the process is what Paddock renders.
	paddock := ocispec.Render("raw-0123456789abcdef", rt.spec, "/agent")
	got.Process, paddock.Process = nil, nil
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(paddock)
	if string(a) != string(b) {
		t.Errorf("raw spec\n%s\ndiffers from Paddock's\n%s", a, b)
	}
}

// realRawRuntime is a raw runtime of the python template under the real
// runsc, or a skip (a failure under `make test`) without one.
func realRawRuntime(t *testing.T) *Runtime {
	t.Helper()
	builtRootfs(t, "python")
	o := bench.Options{Runsc: os.Getenv("PADDOCK_RUNSC"), Agent: os.Getenv("PADDOCK_AGENT"), Cache: os.Getenv("PADDOCK_CACHE")}
	if o.Cache == "" {
		o.Cache = "/var/cache/paddock"
	}
	if o.Runsc == "" || o.Agent == "" {
		if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" {
			t.Fatal("PADDOCK_RUNSC and PADDOCK_AGENT must name runsc and the agent (make test sets them)")
		}
		t.Skip("PADDOCK_RUNSC and PADDOCK_AGENT are not set")
	}
	rt, err := NewRuntime(o, "python")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

func TestGVisorRawRunAndRestoreDeleteTheirContainers(t *testing.T) {
	rt := realRawRuntime(t)
	res, err := rt.Run(t.Context(), []string{"python3", "-c", "import os; print(os.getuid(), os.getcwd())"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "1000 /workspace\n" || res.Delete <= 0 || res.Total <= res.Delete {
		t.Errorf("run: %+v", res)
	}
	// The steady state's empty sandboxes: /bin/true counts as a run, and a
	// sandbox whose program fails does not.
	if res, err := rt.Run(t.Context(), []string{"/bin/true"}); err != nil || res.Stdout != "" {
		t.Errorf("empty sandbox: %+v, %v", res, err)
	}
	if _, err := rt.Run(t.Context(), []string{"/bin/false"}); err == nil {
		t.Error("a raw run of /bin/false reported no error")
	}
	img, err := rt.checkpoint(t.Context(), []string{"python3", "-c", waitingProgram("x = 41")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		res, err := rt.restore(t.Context(), img, "print(x + 1)")
		if err != nil {
			t.Fatalf("restore %d: %v", i, err)
		}
		if res.Stdout != "42\n" || res.Delete <= 0 || res.Total <= res.Delete {
			t.Errorf("restore %d: %+v", i, res)
		}
	}
	out, err := rt.Command(t.Context(), false, "list", "--format=json").Output()
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(string(out)); s != "[]" && s != "null" {
		t.Errorf("containers left under the raw root: %s", s)
	}
}

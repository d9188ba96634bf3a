package host

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMemStat(t *testing.T) {
	st, err := ParseMemStat(strings.NewReader("cache 1048576\nrss 2097152\nshmem 4096\ntotal_rss 3145728\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"cache": 1048576, "rss": 2097152, "shmem": 4096, "total_rss": 3145728}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("got %v, want %v", st, want)
	}
	if got := StatValue(st, "rss"); got != 3145728 {
		t.Errorf("rss = %d, want the hierarchical total 3145728", got)
	}
	if got := StatValue(st, "shmem"); got != 4096 {
		t.Errorf("shmem = %d, want 4096", got)
	}
	if _, err := ParseMemStat(strings.NewReader("rss lots\n")); err == nil {
		t.Error("a non-numeric value parsed")
	}
}

func TestSandboxCgroupsKeepsTheServersOwn(t *testing.T) {
	cg, state := t.TempDir(), t.TempDir()
	for _, id := range []string{"pd-aaaa", "pd-bbbb", "pd-cccc", "pd-other"} {
		mkdir(t, filepath.Join(cg, id))
	}
	writeBundle := func(id, spec string) {
		mkdir(t, filepath.Join(state, "bundles", id))
		if err := os.WriteFile(filepath.Join(state, "bundles", id, "config.json"), []byte(spec), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeBundle("pd-aaaa", `{"process":{"args":["/opt/paddock/paddock-agent","--language=python","--uid=1000"]}}`)
	writeBundle("pd-bbbb", `{"process":{"args":["/opt/paddock/paddock-agent","--language=node"]}}`)
	writeBundle("pd-cccc", `{"process":{"args":["/opt/paddock/paddock-agent","--language=python"]}}`)
	writeBundle("pd-gone", `{"process":{"args":["--language=python"]}}`) // no cgroup: already torn down

	got, err := SandboxCgroups(cg, state)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"python": {"pd-aaaa", "pd-cccc"}, "node": {"pd-bbbb"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, err := SandboxCgroups(filepath.Join(cg, "missing"), state); err != nil || len(got) != 0 {
		t.Errorf("missing cgroup root: %v, %v; want empty, nil", got, err)
	}
}

func TestDetectMemCgroupsOutsideCgroup2IsV1(t *testing.T) {
	dir := t.TempDir()
	got, err := DetectCgroups(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Cgroups{Root: filepath.Join(dir, "memory", "paddock")}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := DetectCgroups(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory was detected")
	}
}

func TestStartKindOf(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("pd-aaaa_sandbox:pd-aaaa.state", `{"id":{"cid":"pd-aaaa"},"sandbox":{"id":"pd-aaaa","restored":true,"checkpointed":false}}`)
	write("pd-bbbb_sandbox:pd-bbbb.state", `{"id":{"cid":"pd-bbbb"},"sandbox":{"id":"pd-bbbb","restored":false}}`)
	write("pd-cccc_sandbox:pd-cccc.state", `{"id":{"cid":"pd-cccc"}}`)
	tests := []struct {
		id, want string
		fails    bool
	}{
		{id: "pd-aaaa", want: "restore"},
		{id: "pd-bbbb", want: "cold"},
		{id: "pd-cccc", fails: true}, // no sandbox in the state
		{id: "pd-dddd", fails: true}, // no state file
	}
	for _, tt := range tests {
		got, err := StartKindOf(root, tt.id)
		if (err != nil) != tt.fails || got != tt.want {
			t.Errorf("startKindOf(%s) = %q, %v; want %q, fails %v", tt.id, got, err, tt.want, tt.fails)
		}
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestStateTemplate(t *testing.T) {
	state := []byte(`{"id":"pd-1","config":{"labels":["dev.paddock.instance=1-2","dev.paddock.template=node","bundle=/"]}}`)
	if got := stateTemplate(state); got != "node" {
		t.Errorf("stateTemplate = %q, want node", got)
	}
	if got := stateTemplate([]byte(`{}`)); got != "unknown" {
		t.Errorf("stateTemplate of no labels = %q, want unknown", got)
	}
}

func TestMemCgroupsForRunc(t *testing.T) {
	for _, c := range []struct{ in, want Cgroups }{
		{Cgroups{Root: "/sys/fs/cgroup/paddock", V2: true}, Cgroups{Root: "/sys/fs/cgroup/paddock-runc", V2: true}},
		{Cgroups{Root: "/sys/fs/cgroup/memory/paddock"}, Cgroups{Root: "/sys/fs/cgroup/memory/paddock-runc"}},
	} {
		if got := c.in.ForRunc(); got != c.want {
			t.Errorf("%+v.forRunc() = %+v, want %+v", c.in, got, c.want)
		}
	}
}

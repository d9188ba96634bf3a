package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMemStat(t *testing.T) {
	st, err := parseMemStat(strings.NewReader("cache 1048576\nrss 2097152\nshmem 4096\ntotal_rss 3145728\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"cache": 1048576, "rss": 2097152, "shmem": 4096, "total_rss": 3145728}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("got %v, want %v", st, want)
	}
	if got := statValue(st, "rss"); got != 3145728 {
		t.Errorf("rss = %d, want the hierarchical total 3145728", got)
	}
	if got := statValue(st, "shmem"); got != 4096 {
		t.Errorf("shmem = %d, want 4096", got)
	}
	if _, err := parseMemStat(strings.NewReader("rss lots\n")); err == nil {
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

	got, err := sandboxCgroups(cg, state)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"python": {"pd-aaaa", "pd-cccc"}, "node": {"pd-bbbb"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, err := sandboxCgroups(filepath.Join(cg, "missing"), state); err != nil || len(got) != 0 {
		t.Errorf("missing cgroup root: %v, %v; want empty, nil", got, err)
	}
}

func TestReadMemCgroup(t *testing.T) {
	tests := []struct {
		name  string
		v2    bool
		files map[string]string
		want  memSample
	}{
		{"cgroup v1", false, map[string]string{
			"memory.usage_in_bytes": "31457280\n",
			"memory.stat":           "cache 4096\nrss 1048576\nshmem 20971520\ntotal_rss 2097152\ntotal_shmem 20971520\n",
		}, memSample{Usage: 31457280, RSS: 2097152, Shmem: 20971520}},
		{"cgroup v2", true, map[string]string{
			"memory.current": "41943040\n",
			"memory.stat":    "anon 3145728\nfile 8192\nkernel 65536\nshmem 26214400\n",
		}, memSample{Usage: 41943040, RSS: 3145728, Shmem: 26214400}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := readMemCgroup(dir, tt.v2)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if _, err := readMemCgroup(dir, !tt.v2); err == nil {
				t.Error("read the other version's files without error")
			}
		})
	}
	m := memRow{Samples: []memSample{{Usage: 31457280}, {Usage: 10485760}}}
	if mb := m.meanMB(func(s memSample) uint64 { return s.Usage }); mb != 20 {
		t.Errorf("mean usage %v MiB, want 20", mb)
	}
}

func TestDetectMemCgroupsOutsideCgroup2IsV1(t *testing.T) {
	dir := t.TempDir()
	got, err := detectMemCgroups(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (memCgroups{Root: filepath.Join(dir, "memory", "paddock")}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := detectMemCgroups(filepath.Join(dir, "missing")); err == nil {
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
		got, err := startKindOf(root, tt.id)
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

func TestReadyStartKindsCountsTheLanguagesSandboxes(t *testing.T) {
	state := t.TempDir()
	mkdir(t, filepath.Join(state, "runsc"))
	sandbox := func(id, language string, restored bool) {
		mkdir(t, filepath.Join(state, "bundles", id))
		spec := `{"process":{"args":["/opt/paddock/paddock-agent","--language=` + language + `"]}}`
		if err := os.WriteFile(filepath.Join(state, "bundles", id, "config.json"), []byte(spec), 0o600); err != nil {
			t.Fatal(err)
		}
		st := `{"sandbox":{"restored":false}}`
		if restored {
			st = `{"sandbox":{"restored":true}}`
		}
		if err := os.WriteFile(filepath.Join(state, "runsc", id+"_sandbox:"+id+".state"), []byte(st), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sandbox("pd-1", "python", true)
	sandbox("pd-2", "python", false)
	sandbox("pd-3", "python", true)
	sandbox("pd-4", "node", false)
	s := &server{state: state}
	got, err := s.readyStartKinds("python")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"restore": 2, "cold": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// A sandbox whose runsc state is not written yet is still starting.
	mkdir(t, filepath.Join(state, "bundles", "pd-5"))
	if err := os.WriteFile(filepath.Join(state, "bundles", "pd-5", "config.json"), []byte(`{"process":{"args":["--language=python"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.readyStartKinds("python"); err == nil {
		t.Error("a starting sandbox was counted")
	}
}

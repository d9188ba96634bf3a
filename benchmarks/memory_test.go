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
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memory.usage_in_bytes"), []byte("31457280\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.stat"), []byte("rss 1048576\nshmem 20971520\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readMemCgroup(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (memSample{Usage: 31457280, RSS: 1048576, Shmem: 20971520}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	m := memRow{Samples: []memSample{got, {Usage: 10485760}}}
	if mb := m.meanMB(func(s memSample) uint64 { return s.Usage }); mb != 20 {
		t.Errorf("mean usage %v MiB, want 20", mb)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

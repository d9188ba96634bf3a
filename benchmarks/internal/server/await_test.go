package server

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

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
	s := &Server{state: state}
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

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

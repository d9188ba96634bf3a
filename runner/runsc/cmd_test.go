package runsc

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRunsc writes a script that appends its argv to a log and prints
// canned output for `list`.
func fakeRunsc(t *testing.T) (*Runsc, string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "argv.log")
	script := `#!/bin/sh
echo "$*" >> ` + log + `
case "$*" in
  *" list "*) echo '[{"id":"pd-aaaaaaaaaaaaaaaa","pid":7,"status":"running","bundle":"/b"}]' ;;
  *" delete "*pd-bad*) echo "container not found" >&2; exit 1 ;;
esac
`
	path := filepath.Join(dir, "runsc")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Runsc{Path: path, Root: "/state/runsc", Platform: "systrap", Logger: slog.New(slog.DiscardHandler)}, log
}

func TestRunscArgv(t *testing.T) {
	r, log := fakeRunsc(t)
	ctx := t.Context()
	if err := r.Run(ctx, "pd-1", CreateOpts{Bundle: "/b/pd-1", OverlaySize: 64 << 20}, stdio{}); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete(ctx, "pd-1", DeleteOpts{Force: true}); err != nil {
		t.Fatal(err)
	}
	cs, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].ID != "pd-aaaaaaaaaaaaaaaa" || cs[0].Status != "running" {
		t.Errorf("List = %+v", cs)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--root=/state/runsc --platform=systrap --network=none --overlay2=root:self,size=67108864 run --detach --bundle=/b/pd-1 pd-1",
		"--root=/state/runsc --platform=systrap delete --force pd-1",
		"--root=/state/runsc --platform=systrap list --format=json",
	}
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("argv:\n got %q\nwant %q", got, want)
	}
}

func TestRunscErrorCarriesStderr(t *testing.T) {
	r, _ := fakeRunsc(t)
	err := r.Delete(t.Context(), "pd-bad", DeleteOpts{})
	if err == nil || !strings.Contains(err.Error(), "container not found") || !strings.Contains(err.Error(), "runsc delete") {
		t.Fatalf("err = %v, want runsc delete failure with stderr", err)
	}
}

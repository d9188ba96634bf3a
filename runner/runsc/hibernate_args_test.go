package runsc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// TestWakeTakesTheImagesWarmup: a woken sandbox renders the agent line
// its image was taken with, whatever warm-up the caller's spec names.
func TestWakeTakesTheImagesWarmup(t *testing.T) {
	for _, tc := range []struct{ taken, asked string }{
		{"", "import pandas"},
		{"import pandas", ""},
		{"import numpy", "import numpy"},
	} {
		rt := &Runtime{bundles: t.TempDir()}
		taken := runner.Spec{Language: "python", Warmup: tc.taken}
		bundle := filepath.Join(rt.bundles, "pd-1")
		if err := os.Mkdir(bundle, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := writeBundle(bundle, ocispec.Render("pd-1", taken, "/agent")); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := rt.saveArgs("pd-1", dir); err != nil {
			t.Fatal(err)
		}
		got, err := withSavedWarmup(runner.Spec{Language: "python", Warmup: tc.asked}, dir)
		if err != nil || got.Warmup != tc.taken {
			t.Errorf("taken with %q, asked %q: woken with %q (%v)", tc.taken, tc.asked, got.Warmup, err)
		}
	}
	// An image from before the line was kept: the caller's spec stands.
	got, err := withSavedWarmup(runner.Spec{Warmup: "x"}, t.TempDir())
	if err != nil || got.Warmup != "x" {
		t.Errorf("an image without its line: %q (%v), want the spec's", got.Warmup, err)
	}
}

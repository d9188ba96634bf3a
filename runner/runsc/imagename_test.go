package runsc

import (
	"path/filepath"
	"testing"

	"github.com/paddock-dev/paddock/runner"
)

func TestImageName(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec runner.Spec
		want string
	}{
		{"template", runner.Spec{Template: "python", Language: "python"}, "python"},
		{"language only", runner.Spec{Language: "node"}, "node"},
		{"networked", runner.Spec{Template: "python", Language: "python", Network: true}, "python+net"},
		{"networked, language only", runner.Spec{Language: "node", Network: true}, "node+net"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := imageName(tc.spec); got != tc.want {
				t.Errorf("imageName = %q, want %q", got, tc.want)
			}
		})
	}
}

// A template's image without a network and its networked one live side
// by side: neither is an outdated image of the other, so building one
// (whose prune follows) never removes the other, though one runtime
// holds both.
func TestNetworkedImageBesideTheTemplatesOwn(t *testing.T) {
	snapDir := t.TempDir()
	rt := runtimeOn(t, snapDir)
	none := runner.Spec{Language: "python", Template: "python"}
	networked := none
	networked.Network = true
	noneKey, err := rt.SnapshotKey(none)
	if err != nil {
		t.Fatal(err)
	}
	netKey, err := rt.SnapshotKey(networked)
	if err != nil {
		t.Fatal(err)
	}
	if noneKey == netKey {
		t.Fatalf("one key %s for the spec with and without a network", noneKey)
	}
	noneDir, netDir := filepath.Join(snapDir, "python-"+noneKey), filepath.Join(snapDir, "python+net-"+netKey)
	fakeImage(t, noneDir)
	fakeImage(t, netDir)
	for _, c := range []struct {
		spec runner.Spec
		dir  string
	}{{none, noneDir}, {networked, netDir}} {
		img, err := rt.Snapshot(t.Context(), c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if img.Path != c.dir || img.Built {
			t.Fatalf("Snapshot(network %v) = %s (built %v), want %s found in the cache", c.spec.Network, img.Path, img.Built, c.dir)
		}
	}
	rt.pruneSnapshots(imageName(networked), netDir)
	rt.pruneSnapshots(imageName(none), noneDir)
	if !exists(t, noneDir) || !exists(t, netDir) {
		t.Errorf("after both prunes: image without a network there %v, networked there %v; want both", exists(t, noneDir), exists(t, netDir))
	}
}

package kernels_test

import (
	"errors"
	"testing"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// A session that hibernates at its expiry needs hibernation: a runtime
// that cannot save sandboxes (the fake's) refuses it, and opens no
// sandbox. (Sleeping at expiry itself is driven on real gVisor by
// cmd/paddock's TestE2BSDKPause.)
func TestHibernateAtExpiryNeedsHibernation(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{HibernateDir: t.TempDir()})
	_, err := f.m.Create(t.Context(), "", kernels.CreateOptions{Template: "python", HibernateAtExpiry: true})
	if !errors.Is(err, kernels.ErrHibernationOff) {
		t.Fatalf("Create: error = %v, want ErrHibernationOff", err)
	}
	if live := f.rt.Live(); live != 0 {
		t.Errorf("Live = %d after a refused create, want 0", live)
	}
}

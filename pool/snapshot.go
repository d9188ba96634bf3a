package pool

import (
	"context"
	"errors"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// snapState is where a template's snapshot stands.
type snapState string

const (
	snapOff      snapState = "off"      // not snapshotted: cold starts only
	snapBuilding snapState = "building" // being built or looked up
	snapReady    snapState = "ready"    // sandboxes are restored from it
	snapFailed   snapState = "failed"   // the last build failed; retried with backoff
)

// Backoff between failed snapshot builds.
const (
	snapBackoffMin = 2 * time.Second
	snapBackoffMax = 5 * time.Minute
)

// timeoutStrikes is how many restores of one image in a row may time out
// before the image is taken for broken: a restore that runs out of time
// on a loaded machine says nothing about its image, and rebuilding one
// there costs far more than a restore.
const timeoutStrikes = 3

// snapImage is one image a template's sandboxes are restored from and
// where it stands: the template's own (no network) or its networked one
// (netsnap.go). Its fields are guarded by Manager.mu.
type snapImage struct {
	snap    snapState
	img     runner.Snapshot
	rebuild chan struct{} // pokes the goroutine that keeps the image
	// strikes counts restores failed in a row; kept is an image that
	// failed to restore but stays in use (pauseBeforeReuse).
	strikes int
	kept    string
	// network: the image is of the template's spec with a network
	// (runner.Spec.Network), taken in a network namespace of the fixed
	// shape that every clone's own namespace repeats.
	network bool
}

func newSnapImage(network bool) snapImage {
	return snapImage{snap: snapOff, rebuild: make(chan struct{}, 1), network: network}
}

// spec is what si's image is taken of.
func (si *snapImage) spec(tp *tpool) runner.Spec {
	spec := tp.tmpl.Spec
	spec.Network = si.network
	return spec
}

// keepSnapshot runs for each image of a snapshotted template: it builds
// (or finds) the image, then waits until a restore reports the image gone
// or broken and builds it again. Meanwhile sandboxes cold-start.
func (m *Manager) keepSnapshot(tp *tpool, si *snapImage) {
	defer m.fillers.Done()
	log := m.log.With(keyTemplate, tp.tmpl.Name)
	if si.network {
		log = log.With("network", true)
	}
	fails := 0
	for {
		m.setSnapshot(si, snapBuilding, runner.Snapshot{})
		img, err := m.snap.Snapshot(m.ctx, si.spec(tp))
		if m.ctx.Err() != nil {
			return
		}
		if err != nil {
			fails++
			m.setSnapshot(si, snapFailed, runner.Snapshot{})
			delay := snapBackoffMin << min(fails-1, 10)
			delay = min(delay, snapBackoffMax)
			if fails == 1 {
				log.Warn("snapshot failed; sandboxes cold-start until it works", "error", err, "retry_in", delay)
			} else {
				log.Debug("snapshot failed again", "error", err, "failures", fails, "retry_in", delay)
			}
			if m.wait(m.ctx, delay) != nil {
				return
			}
			continue
		}
		if fails > 0 {
			log.Info("snapshot works again", "failures", fails)
		}
		fails = 0
		if d := m.pauseBeforeReuse(si, img); d > 0 {
			log.Info("keeping the image that failed to restore; restoring from it again after a pause", "key", img.Key, "retry_in", d)
			if m.wait(m.ctx, d) != nil {
				return
			}
		}
		m.setSnapshot(si, snapReady, img)
		if img.Built {
			log.Info("snapshot built", "key", img.Key, "took", img.BuildTime.Round(time.Millisecond), "mib", img.Bytes>>20)
		} else {
			log.Info("snapshot found in the cache", "key", img.Key, "mib", img.Bytes>>20)
		}
		tp.poke()
		select {
		case <-m.ctx.Done():
			return
		case <-si.rebuild:
		}
	}
}

func (m *Manager) setSnapshot(si *snapImage, s snapState, img runner.Snapshot) {
	m.mu.Lock()
	si.snap, si.img = s, img
	m.mu.Unlock()
}

// image returns si's image when sandboxes should be restored from it.
func (m *Manager) image(si *snapImage) (runner.Snapshot, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return si.img, si.snap == snapReady
}

// pauseBeforeReuse is how long to cold-start before restoring again from
// img, when img is the image that just failed to restore and was kept
// (another server still uses it, or the restore only timed out): the
// failure may have been passing or the image may be broken, so the pause
// grows with the failures in a row until a restore works.
func (m *Manager) pauseBeforeReuse(si *snapImage, img runner.Snapshot) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if img.Built || img.Path != si.kept || si.strikes == 0 {
		return 0
	}
	si.kept = ""
	return min(snapBackoffMin<<min(si.strikes-1, 10), snapBackoffMax)
}

// restoreFailed retires img after a failed restore: it is dropped from the
// runtime's cache (unless already gone, or still used by another server
// sharing the cache) and rebuilt. A restore that timed out keeps its
// image, up to timeoutStrikes failures in a row, and restores from it
// resume after a pause (pauseBeforeReuse), as they do from an image
// another server kept.
func (m *Manager) restoreFailed(tp *tpool, si *snapImage, img runner.Snapshot, err error) {
	m.mu.Lock()
	tp.restoreFailures++
	si.strikes++
	strikes := si.strikes
	current := si.snap == snapReady && si.img.Path == img.Path
	if current {
		si.snap, si.img = snapBuilding, runner.Snapshot{}
	}
	m.mu.Unlock()
	if !current {
		return
	}
	log := m.log.With(keyTemplate, tp.tmpl.Name, "key", img.Key)
	if si.network {
		log = log.With("network", true)
	}
	switch {
	case errors.Is(err, runner.ErrSnapshotMissing):
		log.Warn("snapshot image is gone; cold-starting until it is rebuilt", "error", err)
	case errors.Is(err, context.DeadlineExceeded) && strikes <= timeoutStrikes:
		log.Warn("restoring the snapshot timed out; keeping the image and cold-starting for a pause", "error", err, "in_a_row", strikes)
		m.mu.Lock()
		si.kept = img.Path
		m.mu.Unlock()
	default:
		log.Warn("restoring the snapshot failed; dropping it and cold-starting until it is rebuilt", "error", err)
		switch derr := m.snap.Drop(img); {
		case errors.Is(derr, runner.ErrSnapshotInUse):
			log.Info("another server still restores from the image; left in place", "error", derr)
			m.mu.Lock()
			si.kept = img.Path
			m.mu.Unlock()
		case derr != nil:
			log.Warn("dropping the broken snapshot failed", "error", derr)
		}
	}
	select {
	case si.rebuild <- struct{}{}:
	default:
	}
}

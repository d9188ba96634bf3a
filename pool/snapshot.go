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

// keepSnapshot runs for each snapshotted template: it builds (or finds)
// the image, then waits until a restore reports the image gone or broken
// and builds it again. Meanwhile sandboxes cold-start.
func (m *Manager) keepSnapshot(tp *tpool) {
	defer m.fillers.Done()
	log := m.log.With(keyTemplate, tp.tmpl.Name)
	fails := 0
	for {
		m.setSnapshot(tp, snapBuilding, runner.Snapshot{})
		img, err := m.snap.Snapshot(m.ctx, tp.tmpl.Spec)
		if m.ctx.Err() != nil {
			return
		}
		if err != nil {
			fails++
			m.setSnapshot(tp, snapFailed, runner.Snapshot{})
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
		if d := m.pauseBeforeReuse(tp, img); d > 0 {
			log.Info("keeping the image that failed to restore; restoring from it again after a pause", "key", img.Key, "retry_in", d)
			if m.wait(m.ctx, d) != nil {
				return
			}
		}
		m.setSnapshot(tp, snapReady, img)
		if img.Built {
			log.Info("snapshot built", "key", img.Key, "took", img.BuildTime.Round(time.Millisecond), "mib", img.Bytes>>20)
		} else {
			log.Info("snapshot found in the cache", "key", img.Key, "mib", img.Bytes>>20)
		}
		tp.poke()
		select {
		case <-m.ctx.Done():
			return
		case <-tp.rebuild:
		}
	}
}

func (m *Manager) setSnapshot(tp *tpool, s snapState, img runner.Snapshot) {
	m.mu.Lock()
	tp.snap, tp.img = s, img
	m.mu.Unlock()
}

// image returns tp's image when sandboxes should be restored from it.
func (m *Manager) image(tp *tpool) (runner.Snapshot, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return tp.img, tp.snap == snapReady
}

// pauseBeforeReuse is how long to cold-start before restoring again from
// img, when img is the image that just failed to restore and was kept
// (another server still uses it, or the restore only timed out): the
// failure may have been passing or the image may be broken, so the pause
// grows with the failures in a row until a restore works.
func (m *Manager) pauseBeforeReuse(tp *tpool, img runner.Snapshot) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if img.Built || img.Path != tp.kept || tp.strikes == 0 {
		return 0
	}
	tp.kept = ""
	return min(snapBackoffMin<<min(tp.strikes-1, 10), snapBackoffMax)
}

// restoreFailed retires img after a failed restore: it is dropped from the
// runtime's cache (unless already gone, or still used by another server
// sharing the cache) and rebuilt. A restore that timed out keeps its
// image, up to timeoutStrikes failures in a row, and restores from it
// resume after a pause (pauseBeforeReuse), as they do from an image
// another server kept.
func (m *Manager) restoreFailed(tp *tpool, img runner.Snapshot, err error) {
	m.mu.Lock()
	tp.restoreFailures++
	tp.strikes++
	strikes := tp.strikes
	current := tp.snap == snapReady && tp.img.Path == img.Path
	if current {
		tp.snap, tp.img = snapBuilding, runner.Snapshot{}
	}
	m.mu.Unlock()
	if !current {
		return
	}
	log := m.log.With(keyTemplate, tp.tmpl.Name, "key", img.Key)
	switch {
	case errors.Is(err, runner.ErrSnapshotMissing):
		log.Warn("snapshot image is gone; cold-starting until it is rebuilt", "error", err)
	case errors.Is(err, context.DeadlineExceeded) && strikes <= timeoutStrikes:
		log.Warn("restoring the snapshot timed out; keeping the image and cold-starting for a pause", "error", err, "in_a_row", strikes)
		m.mu.Lock()
		tp.kept = img.Path
		m.mu.Unlock()
	default:
		log.Warn("restoring the snapshot failed; dropping it and cold-starting until it is rebuilt", "error", err)
		switch derr := m.snap.Drop(img); {
		case errors.Is(derr, runner.ErrSnapshotInUse):
			log.Info("another server still restores from the image; left in place", "error", derr)
			m.mu.Lock()
			tp.kept = img.Path
			m.mu.Unlock()
		case derr != nil:
			log.Warn("dropping the broken snapshot failed", "error", derr)
		}
	}
	select {
	case tp.rebuild <- struct{}{}:
	default:
	}
}

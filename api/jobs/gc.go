package jobs

import (
	"log/slog"
	"time"
)

// Start runs the collector, which deletes expired jobs every GCInterval
// until Close. Begin also drops expired jobs as it goes.
func (s *Store) Start() {
	s.startOnce.Do(func() { go s.collect() })
}

// Close stops the collector and waits for it. The store stays usable;
// jobs simply stop expiring in the background.
func (s *Store) Close() {
	s.closeOnce.Do(func() { close(s.stop) })
	started := true
	s.startOnce.Do(func() { started = false })
	if started {
		<-s.stopped
	}
}

func (s *Store) collect() { collectEvery(s.cfg.GCInterval, s.stop, s.stopped, s.Collect, s.log) }

// collectEvery calls collect every interval until stop closes, logging
// what it deleted, then closes stopped: the collector of both stores.
func collectEvery(interval time.Duration, stop <-chan struct{}, stopped chan<- struct{}, collect func() int, log *slog.Logger) {
	defer close(stopped)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if n := collect(); n > 0 {
				log.Info("deleted expired jobs", "count", n)
			}
		}
	}
}

// Collect deletes the expired jobs now and returns how many.
func (s *Store) Collect() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.expireLocked(s.cfg.Now())
}

// expireLocked deletes the finished jobs whose TTL has passed. The
// finished list is in finishing order, so they are at its front.
func (s *Store) expireLocked(now time.Time) int {
	n := 0
	for el := s.finished.Front(); el != nil; el = s.finished.Front() {
		name := el.Value.(string)
		if now.Before(s.jobs[name].finished.Add(s.cfg.TTL)) {
			break
		}
		s.removeLocked(name)
		n++
	}
	return n
}

// makeRoomLocked evicts the oldest finished jobs until jobs more of them
// and bytes more bytes fit. It reports false when they cannot fit
// however many finished jobs go (the rest are running).
func (s *Store) makeRoomLocked(jobs int, bytes int64) bool {
	evicted := 0
	for len(s.jobs)+jobs > s.cfg.MaxJobs || s.bytes+bytes > s.cfg.MaxBytes {
		el := s.finished.Front()
		if el == nil {
			return false
		}
		s.removeLocked(el.Value.(string))
		evicted++
	}
	if evicted > 0 {
		s.log.Debug("evicted the oldest finished jobs", "count", evicted)
	}
	return true
}

// removeLocked deletes a finished job, file and entry. The file goes
// under the lock so that a new claim of the same name cannot write it
// in between.
func (s *Store) removeLocked(name string) {
	e := s.jobs[name]
	if err := removeFile(s.path(name)); err != nil {
		s.log.Warn("deleting a job file", "error", err)
	}
	s.finished.Remove(e.elem)
	delete(s.jobs, name)
	s.bytes -= e.size
}

package jobs

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Open loads the jobs under cfg.Dir, creating it if missing. No other
// process may use the directory meanwhile: jobs an earlier process left
// running are rewritten as interrupted (their TTL starts now), expired
// and unreadable job files and leftover temporary files are deleted,
// and the oldest finished jobs are evicted over the limits.
func Open(cfg Config) (*Store, Recovery, error) {
	var rec Recovery
	s, err := newStore(cfg)
	if err != nil {
		return nil, rec, err
	}
	if err := os.MkdirAll(s.cfg.Dir, 0o700); err != nil {
		return nil, rec, fmt.Errorf("creating the jobs directory: %w", err)
	}
	entries, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return nil, rec, fmt.Errorf("reading the jobs directory: %w", err)
	}
	now := s.cfg.Now()
	type loaded struct {
		name string
		e    *entry
	}
	var finished []loaded
	for _, de := range entries {
		name := de.Name()
		switch {
		case strings.HasPrefix(name, tempPrefix):
			// A write cut short by a crash; its job file is intact.
			if err := removeFile(s.path(name)); err != nil {
				return nil, rec, fmt.Errorf("deleting %s: %w", name, err)
			}
			continue
		case !de.Type().IsRegular() || !isJobFile(name):
			continue
		}
		job, size, err := readMeta(s.path(name))
		if err == nil && !valid(name, job) {
			err = errors.New("not a job this store wrote")
		}
		if err != nil {
			s.log.Warn("deleting an unreadable job file", "file", name, "error", err)
			rec.Unreadable++
			if err := removeFile(s.path(name)); err != nil {
				return nil, rec, fmt.Errorf("deleting %s: %w", name, err)
			}
			continue
		}
		if job.State == Running {
			job.State, job.Finished = Interrupted, now
			data, err := encode(job)
			if err == nil {
				err = s.writeFile(name, data)
			}
			if err != nil {
				return nil, rec, fmt.Errorf("marking job %s interrupted: %w", name, err)
			}
			size = int64(len(data))
			rec.Interrupted++
		}
		e := &entry{digest: job.Digest, state: job.State, created: job.Created,
			finished: cmp.Or(job.Finished, job.Created), size: size}
		if !now.Before(e.finished.Add(s.cfg.TTL)) {
			if err := removeFile(s.path(name)); err != nil {
				return nil, rec, fmt.Errorf("deleting %s: %w", name, err)
			}
			rec.Expired++
			continue
		}
		s.jobs[name] = e
		s.bytes += size
		finished = append(finished, loaded{name, e})
	}
	slices.SortFunc(finished, func(a, b loaded) int { return a.e.finished.Compare(b.e.finished) })
	for _, l := range finished {
		l.e.elem = s.finished.PushBack(l.name)
	}
	before := len(s.jobs)
	s.makeRoomLocked(0, 0) // alone: no lock needed yet
	rec.Evicted = before - len(s.jobs)
	rec.Loaded = len(s.jobs)
	return s, rec, nil
}

// valid reports whether job is a well-formed job stored under name.
func valid(name string, job Job) bool {
	switch {
	case job.Version != fileVersion, fileName(job.Tenant, job.Key) != name, job.Digest == "", job.Created.IsZero():
		return false
	case job.State == Running, job.State == Interrupted:
		return true
	case job.State == Done:
		return !job.Finished.IsZero() && job.Result != nil
	}
	return false
}

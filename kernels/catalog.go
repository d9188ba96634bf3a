package kernels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// The session catalog. With hibernation on, every session has a record in
// the catalog from its creation to its end: who owns it, its template,
// TTL and limits, and, while it sleeps, its image and checkpoints. A
// server that stops hibernates its sessions and leaves their records; the
// next one on the same hibernate dir reads them back (adopt), and its
// sessions go on with the same ids and owners. A session whose record
// says it was running, with no image, was not saved (the server was
// killed): it comes back lost, and says why at its next call.

// Catalog keeps session records, each an opaque document under its
// session's id. Calls come one at a time.
type Catalog interface {
	Load(ctx context.Context) (map[string][]byte, error)
	Save(ctx context.Context, id string, doc []byte) error
	Remove(ctx context.Context, id string) error
}

// catalogTimeout bounds one catalog call.
const catalogTimeout = 10 * time.Second

// record is a session's catalog document.
type record struct {
	ID       string            `json:"id"`
	Owner    string            `json:"owner"`
	Template string            `json:"template"`
	Created  time.Time         `json:"created"`
	LastUsed time.Time         `json:"last_used"`
	TTL      time.Duration     `json:"ttl"`
	Env      map[string]string `json:"env,omitempty"`
	Limits   runner.Limits     `json:"limits"`
	Count    int               `json:"execution_count"`
	Restarts int               `json:"restarts"`
	Sleeps   int               `json:"sleeps"`
	// Image is the base name, under the hibernate dir, of the image of a
	// sleeping session; empty while it runs.
	Image       string             `json:"image,omitempty"`
	ImageBytes  int64              `json:"image_bytes,omitempty"`
	SleptAt     time.Time          `json:"slept_at,omitzero"`
	Lost        string             `json:"lost,omitempty"`
	Checkpoints []checkpointRecord `json:"checkpoints,omitempty"`
	// SleepAtExpiry: the session hibernates at its idle TTL.
	SleepAtExpiry bool `json:"sleep_at_expiry,omitempty"`
	// NoteDoor's Note is a door's bookkeeping (note.go).
	NoteDoor string `json:"note_door,omitempty"`
	Note     []byte `json:"note,omitempty"`
	// Network is the session's egress policy (network.go).
	Network string `json:"network,omitempty"`
}

type checkpointRecord struct {
	Checkpoint
	Dir string `json:"dir"` // base name under the hibernate dir
}

// recordLocked is s's catalog document as it stands.
func (m *Manager) recordLocked(s *session) record {
	r := record{ID: s.id, Owner: s.owner, Template: s.template, Created: s.created, LastUsed: s.lastUsed,
		TTL: s.ttl, Env: s.env, Limits: s.limits, Count: s.count, Restarts: s.restarts, Sleeps: s.sleeps,
		SleepAtExpiry: s.sleepAtExpiry, NoteDoor: s.noteDoor, Note: s.note, Network: s.network}
	if s.asleep {
		r.Image, r.ImageBytes, r.SleptAt = filepath.Base(s.image), s.imageBytes, s.sleptAt
	}
	if s.lost {
		r.Lost = s.lostWhy
	}
	for _, c := range s.checkpoints {
		r.Checkpoints = append(r.Checkpoints, checkpointRecord{Checkpoint: c.Checkpoint, Dir: filepath.Base(c.dir)})
	}
	return r
}

// persist writes s's record as it stands now, or removes it once s has
// ended. Records are written one at a time, each from the state at its
// turn, so the last write is always the latest state. A failure is
// logged: the session goes on, but a restart may not know it.
func (m *Manager) persist(s *session) {
	if m.cfg.Catalog == nil {
		return
	}
	m.catMu.Lock()
	defer m.catMu.Unlock()
	m.mu.Lock()
	gone, r := s.closed && !s.kept, m.recordLocked(s)
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), catalogTimeout)
	defer cancel()
	var err error
	if gone {
		err = m.cfg.Catalog.Remove(ctx, s.id)
	} else {
		var doc []byte
		if doc, err = json.Marshal(r); err == nil {
			err = m.cfg.Catalog.Save(ctx, s.id, doc)
		}
	}
	if err != nil {
		m.log.Warn("writing the session catalog failed: a restart may not know this session", keySessionID, s.id, "error", err)
	}
}

// adopt reads the catalog back at start: the sessions an earlier server
// left become this one's, asleep when their image is there, lost (saying
// why) when it is not. It returns the names under the hibernate dir that
// those sessions still use.
func (m *Manager) adopt(ctx context.Context) (map[string]bool, error) {
	keep := map[string]bool{}
	if m.cfg.Catalog == nil {
		return keep, nil
	}
	docs, err := m.cfg.Catalog.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("kernels: reading the session catalog: %w", err)
	}
	var asleep, lost int
	for id, doc := range docs {
		var r record
		if err := json.Unmarshal(doc, &r); err != nil || r.ID != id || r.Template == "" {
			m.log.Warn("dropping an unreadable session record", keySessionID, id, "error", err)
			_ = m.cfg.Catalog.Remove(ctx, id)
			continue
		}
		s := m.adoptOne(r, keep)
		m.sessions[s.id] = s
		if s.lost {
			lost++
			if r.Lost == "" { // lost now: the history and the record say so
				m.persist(s)
				if m.cfg.OnEnd != nil {
					m.cfg.OnEnd(s.owner, s.id, s.template, "lost: "+s.lostWhy)
				}
			}
		} else {
			asleep++
		}
	}
	if len(docs) > 0 {
		m.log.Info("took over the sessions an earlier server left", "hibernated", asleep, "lost", lost)
	}
	return keep, nil
}

// adoptOne makes r's session, marking in keep the files it still uses.
func (m *Manager) adoptOne(r record, keep map[string]bool) *session {
	s := &session{id: r.ID, owner: r.Owner, template: r.Template, created: r.Created, lastUsed: r.LastUsed,
		ttl: r.TTL, env: r.Env, limits: r.Limits, network: r.Network, count: r.Count, restarts: r.Restarts, sleeps: r.Sleeps,
		sleepAtExpiry: r.SleepAtExpiry, noteDoor: r.NoteDoor, note: r.Note, ended: make(chan struct{}), cur: &lease{sb: goneSandbox{}}}
	s.cur.releaseOnce.Do(func() {}) // nothing to give back
	why := r.Lost
	switch {
	case why != "":
	case r.Image == "":
		why = "the server stopped while it ran and could not save it"
	case !isBaseName(r.Image):
		why = "its record names an image outside the hibernate dir"
	default:
		dir := filepath.Join(m.cfg.HibernateDir, r.Image)
		if _, err := os.Stat(dir); err != nil {
			why = fmt.Sprintf("its hibernated state is missing: %v", err)
			break
		}
		s.asleep, s.image, s.imageBytes, s.sleptAt = true, dir, r.ImageBytes, r.SleptAt
		m.sleepBytes += r.ImageBytes
		keep[r.Image] = true
	}
	if why != "" {
		s.lost, s.lostWhy = true, why
		s.markEnded()
		return s
	}
	for _, c := range r.Checkpoints {
		if !isBaseName(c.Dir) {
			continue
		}
		if s.checkpoints == nil {
			s.checkpoints = map[string]*checkpoint{}
		}
		s.checkpoints[c.Name] = &checkpoint{Checkpoint: c.Checkpoint, dir: filepath.Join(m.cfg.HibernateDir, c.Dir)}
		m.sleepBytes += c.Bytes
		keep[c.Dir] = true
	}
	return s
}

// isBaseName reports whether name is one plain file name.
func isBaseName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`)
}

// goneSandbox stands for the sandbox of a session adopted asleep or lost:
// it has none until it wakes.
type goneSandbox struct{ runner.Sandbox }

func (goneSandbox) ID() string { return "" }

// saveAll hibernates, at Close, every session that runs, and keeps the
// records of all: the next server on the hibernate dir takes them over.
// A session whose turn cannot be had within ctx, or that cannot be saved,
// is recorded lost with the reason. It returns how many were saved and
// how many lost.
func (m *Manager) saveAll(ctx context.Context, all []*session) (saved, lost int) {
	sem := make(chan struct{}, saveParallel)
	done := make(chan bool, len(all))
	for _, s := range all {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			done <- m.saveOne(ctx, s)
		}()
	}
	for range all {
		if <-done {
			saved++
		} else {
			lost++
		}
	}
	return saved, lost
}

// saveParallel is how many sessions Close saves at once.
const saveParallel = 4

func (m *Manager) saveOne(ctx context.Context, s *session) bool {
	m.mu.Lock()
	asleep, isLost := s.asleep, s.lost
	m.mu.Unlock()
	if isLost {
		m.persist(s)
		return false
	}
	if !asleep {
		err := m.acquireTurn(ctx, s, turnFirst, nil)
		if err == nil {
			err = m.sleep(ctx, s)
			m.releaseTurn(s)
		}
		if err != nil && !errors.Is(err, ErrSessionLost) {
			m.markLost(s, fmt.Sprintf("the server stopped and could not save it: %v", err))
		}
	}
	m.mu.Lock()
	ok := s.asleep && !s.lost
	m.mu.Unlock()
	m.persist(s)
	return ok
}

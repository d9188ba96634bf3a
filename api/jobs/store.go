package jobs

import (
	"bytes"
	"cmp"
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"
)

// Defaults for zero Config fields.
const (
	DefaultTTL        = 24 * time.Hour
	DefaultMaxJobs    = 10_000
	DefaultMaxBytes   = 1 << 30
	DefaultGCInterval = time.Minute
)

// State is where a job stands.
type State string

const (
	Running     State = "running"     // its run is in flight in this process
	Done        State = "done"        // its run completed; Result holds the answer
	Interrupted State = "interrupted" // the process died while it ran
)

// Config is the store's typed configuration. Zero fields take defaults.
type Config struct {
	// Dir holds the job files; it is created if missing. Required.
	Dir string
	// TTL is how long a finished job is kept after it finished (or, for
	// an interrupted one, after Open marked it).
	TTL time.Duration
	// MaxJobs caps the jobs kept, running ones included.
	MaxJobs int
	// MaxBytes caps the size of the job files together.
	MaxBytes int64
	// GCInterval is how often Start's collector deletes expired jobs.
	GCInterval time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Logger receives the collector's reports; nil discards them.
	Logger *slog.Logger
}

// Job is one keyed request and, once done, its result. It is also the
// content of the job's file.
type Job struct {
	Version  int       `json:"version"`
	Tenant   string    `json:"tenant"`
	Key      string    `json:"key"`
	Digest   string    `json:"digest"` // of the request, chosen by the caller
	State    State     `json:"state"`
	Created  time.Time `json:"created"`
	Finished time.Time `json:"finished,omitzero"`
	// Result is the JSON answer of a done job, byte for byte as the
	// caller gave it (compact JSON). It comes last in the file so that
	// Open can read a job's state without it.
	Result json.RawMessage `json:"result,omitempty"`
}

// fileVersion is Job.Version of the files this package writes.
const fileVersion = 1

// entry is the index's view of one job file.
type entry struct {
	digest   string
	state    State
	created  time.Time
	finished time.Time
	size     int64         // bytes of the file (reserved, while writing)
	elem     *list.Element // in Store.finished; nil while running
}

// Store indexes the job files in memory and writes them on each change.
type Store struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	jobs     map[string]*entry // file name → job
	finished *list.List        // names of finished jobs, oldest first
	bytes    int64             // sizes of every job's file

	startOnce sync.Once
	closeOnce sync.Once
	stop      chan struct{}
	stopped   chan struct{}
}

// Recovery is what Open found on disk.
type Recovery struct {
	Loaded      int // jobs kept, Interrupted included
	Interrupted int // jobs left running, now marked interrupted
	Expired     int // finished jobs past the TTL, deleted
	Evicted     int // finished jobs over MaxJobs or MaxBytes, deleted
	Unreadable  int // job files that could not be parsed, deleted
}

// Begin claims key for tenant's request of digest, or finds its job:
//
//   - a key not seen (or whose job expired): a running job is recorded
//     durably and returned with State Running. The caller now holds it
//     and must end it with Finish or Forget.
//   - a done job of the same digest: returned with its Result.
//   - an interrupted job of the same digest: returned.
//
// It fails with ErrKeyReused when the key's job has another digest,
// ErrInProgress while it runs, and ErrFull when the store is full of
// running jobs.
func (s *Store) Begin(tenant, key, digest string) (Job, error) {
	name := fileName(tenant, key)
	for range 3 {
		s.mu.Lock()
		now := s.cfg.Now()
		s.expireLocked(now)
		e, ok := s.jobs[name]
		if !ok {
			job, err := s.claimLocked(name, Job{Tenant: tenant, Key: key, Digest: digest, Created: now})
			return job, err // claimLocked unlocked
		}
		if e.digest != digest {
			s.mu.Unlock()
			return Job{}, ErrKeyReused
		}
		state, created, finished := e.state, e.created, e.finished
		s.mu.Unlock()
		switch state {
		case Running:
			return Job{}, ErrInProgress
		case Interrupted:
			return Job{Version: fileVersion, Tenant: tenant, Key: key, Digest: digest,
				State: Interrupted, Created: created, Finished: finished}, nil
		}
		// Done: its result is on disk. The file may have expired or been
		// evicted (and even claimed again) since the lock was released;
		// then look again.
		job, err := readJob(s.path(name))
		switch {
		case err == nil && job.State == Done && job.Digest == digest && job.Created.Equal(created):
			return job, nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return Job{}, fmt.Errorf("reading job %s: %w", name, err)
		}
	}
	return Job{}, fmt.Errorf("job %s: changed while it was read", name)
}

// claimLocked records job as running under name, making room first, and
// unlocks s.mu.
func (s *Store) claimLocked(name string, job Job) (Job, error) {
	job.Version, job.State = fileVersion, Running
	data, err := encode(job)
	if err != nil {
		s.mu.Unlock()
		return Job{}, err
	}
	size := int64(len(data))
	if !s.makeRoomLocked(1, size) {
		s.mu.Unlock()
		return Job{}, ErrFull
	}
	e := &entry{digest: job.Digest, state: Running, created: job.Created, size: size}
	s.jobs[name] = e
	s.bytes += size
	s.mu.Unlock()

	// The entry is running, so nothing else touches its file meanwhile.
	if err := s.writeFile(name, data); err != nil {
		return Job{}, errors.Join(fmt.Errorf("recording job %s: %w", name, err), s.drop(name, e))
	}
	return job, nil
}

// Finish records the result of job, which Begin returned running, and
// marks it done. When the result cannot be kept (it does not fit in
// MaxBytes, or writing failed) the job is forgotten instead and the error
// says why.
func (s *Store) Finish(job Job, result json.RawMessage) error {
	name := fileName(job.Tenant, job.Key)
	now := s.cfg.Now()
	job.State, job.Finished, job.Result = Done, now, result
	data, err := encode(job)
	if err != nil {
		return errors.Join(err, s.Forget(job))
	}

	s.mu.Lock()
	e, err := s.heldLocked(name, job)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	size := int64(len(data))
	if !s.makeRoomLocked(0, size-e.size) {
		s.mu.Unlock()
		return errors.Join(fmt.Errorf("keeping a %d-byte result: %w", size, ErrFull), s.drop(name, e))
	}
	s.bytes += size - e.size
	e.size = size
	s.mu.Unlock()

	if err := s.writeFile(name, data); err != nil {
		return errors.Join(fmt.Errorf("recording job %s: %w", name, err), s.drop(name, e))
	}
	s.mu.Lock()
	e.state, e.finished = Done, now
	e.elem = s.finished.PushBack(name)
	s.mu.Unlock()
	return nil
}

// Forget deletes job, which Begin returned running and whose run did not
// happen, so that the key can be used again.
func (s *Store) Forget(job Job) error {
	name := fileName(job.Tenant, job.Key)
	s.mu.Lock()
	e, err := s.heldLocked(name, job)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.drop(name, e)
}

// heldLocked returns the running entry of job.
func (s *Store) heldLocked(name string, job Job) (*entry, error) {
	e, ok := s.jobs[name]
	if !ok || e.state != Running || !e.created.Equal(job.Created) || e.digest != job.Digest {
		return nil, fmt.Errorf("job %s: %w", name, ErrNotClaimed)
	}
	return e, nil
}

// drop deletes the running entry e's file, then the entry. The file goes
// first: while the entry is in the index, no one else writes the file.
func (s *Store) drop(name string, e *entry) error {
	err := removeFile(s.path(name))
	s.mu.Lock()
	if s.jobs[name] == e {
		delete(s.jobs, name)
		s.bytes -= e.size
	}
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("deleting job %s: %w", name, err)
	}
	return nil
}

// Len is the number of jobs kept, running ones included.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.jobs)
}

// encode is job's file content. The result keeps its bytes: json.Marshal
// would escape HTML characters in it.
func encode(job Job) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(job); err != nil {
		return nil, fmt.Errorf("encoding job: %w", err)
	}
	return buf.Bytes(), nil
}

func newStore(cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		return nil, errors.New("jobs: Config.Dir is empty")
	}
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	return &Store{cfg: cfg, log: cfg.Logger, jobs: map[string]*entry{}, finished: list.New(),
		stop: make(chan struct{}), stopped: make(chan struct{})}, nil
}

// withDefaults fills cfg's zero fields.
func withDefaults(cfg Config) (Config, error) {
	cfg.TTL = cmp.Or(cfg.TTL, DefaultTTL)
	cfg.MaxJobs = cmp.Or(cfg.MaxJobs, DefaultMaxJobs)
	cfg.MaxBytes = cmp.Or(cfg.MaxBytes, DefaultMaxBytes)
	cfg.GCInterval = cmp.Or(cfg.GCInterval, DefaultGCInterval)
	if cfg.TTL < 0 || cfg.MaxJobs < 0 || cfg.MaxBytes < 0 || cfg.GCInterval < 0 {
		return cfg, errors.New("jobs: negative TTL, MaxJobs, MaxBytes or GCInterval")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Dialects OpenSQL knows: how its database numbers placeholders.
const (
	DialectSQLite   = "sqlite"   // ?1, ?2 …
	DialectPostgres = "postgres" // $1, $2 …
)

// SQLStore keeps jobs in the jobs table of a SQL database (the history
// database, whose package owns the table's schema), with the semantics
// of Store: Begin claims with a unique insert, so of two servers or two
// requests only one holds a key.
type SQLStore struct {
	db      *sql.DB
	dialect string
	cfg     Config
	log     *slog.Logger
	mu      sync.Mutex // orders this process's changes; the database orders the rest

	startOnce sync.Once
	closeOnce sync.Once
	stop      chan struct{}
	stopped   chan struct{}
}

// jobOverhead is what a row costs MaxBytes besides its strings.
const jobOverhead = 64

// OpenSQL uses db's jobs table (cfg.Dir is unused). Like Open, it marks
// the jobs left running as interrupted (their TTL starts now), deletes
// the expired ones and evicts the oldest finished over the limits. No
// other server may use the table meanwhile.
func OpenSQL(ctx context.Context, db *sql.DB, dialect string, cfg Config) (*SQLStore, Recovery, error) {
	var rec Recovery
	if dialect != DialectSQLite && dialect != DialectPostgres {
		return nil, rec, fmt.Errorf("jobs: unknown SQL dialect %q", dialect)
	}
	cfg.Dir = "-"
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, rec, err
	}
	s := &SQLStore{db: db, dialect: dialect, cfg: cfg, log: cfg.Logger,
		stop: make(chan struct{}), stopped: make(chan struct{})}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		now := s.cfg.Now().UnixMilli()
		n, err := s.exec(ctx, tx, `UPDATE jobs SET state = $1, finished_ms = $2 WHERE state = $3`,
			Interrupted, now, Running)
		if err != nil {
			return fmt.Errorf("marking running jobs interrupted: %w", err)
		}
		rec.Interrupted = int(n)
		if rec.Expired, err = s.expire(ctx, tx, now); err != nil {
			return err
		}
		if _, rec.Evicted, err = s.makeRoom(ctx, tx, 0, 0); err != nil {
			return err
		}
		rec.Loaded, _, err = s.usage(ctx, tx)
		return err
	})
	if err != nil {
		return nil, Recovery{}, fmt.Errorf("opening the jobs table: %w", err)
	}
	return s, rec, nil
}

// Begin is Store.Begin.
func (s *SQLStore) Begin(tenant, key, digest string) (Job, error) {
	ctx := context.Background()
	name := rowName(tenant, key)
	s.mu.Lock()
	defer s.mu.Unlock()
	var (
		job     Job
		verdict error // committed with the expiry, unlike a failure
	)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		now := s.cfg.Now().UnixMilli()
		if _, err := s.expire(ctx, tx, now); err != nil {
			return err
		}
		var (
			state            State
			gotDigest        string
			created, finishd int64
			result           []byte
		)
		err := tx.QueryRowContext(ctx, s.q(`SELECT digest, state, created_ms, finished_ms, result FROM jobs WHERE name = $1`), name).
			Scan(&gotDigest, &state, &created, &finishd, &result)
		switch {
		case err == nil:
			switch {
			case gotDigest != digest:
				verdict = ErrKeyReused
				return nil
			case state == Running:
				verdict = ErrInProgress
				return nil
			}
			job = Job{Version: fileVersion, Tenant: tenant, Key: key, Digest: digest, State: state,
				Created: time.UnixMilli(created), Finished: time.UnixMilli(finishd)}
			if state == Done {
				job.Result = result
			}
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("reading job %s: %w", name, err)
		}
		size := int64(len(tenant)+len(key)+len(digest)) + jobOverhead
		ok, _, err := s.makeRoom(ctx, tx, 1, size)
		if err != nil {
			return err
		}
		if !ok {
			verdict = ErrFull
			return nil
		}
		n, err := s.exec(ctx, tx, `INSERT INTO jobs (name, tenant, idem_key, digest, state, created_ms, finished_ms, size)
			VALUES ($1, $2, $3, $4, $5, $6, 0, $7) ON CONFLICT (name) DO NOTHING`,
			name, tenant, key, digest, Running, now, size)
		if err != nil {
			return fmt.Errorf("recording job %s: %w", name, err)
		}
		if n == 0 { // another server claimed it meanwhile
			verdict = ErrInProgress
			return nil
		}
		job = Job{Version: fileVersion, Tenant: tenant, Key: key, Digest: digest, State: Running, Created: time.UnixMilli(now)}
		return nil
	})
	if err != nil {
		return Job{}, err
	}
	if verdict != nil {
		return Job{}, verdict
	}
	return job, nil
}

// Finish is Store.Finish.
func (s *SQLStore) Finish(job Job, result json.RawMessage) error {
	ctx := context.Background()
	name := rowName(job.Tenant, job.Key)
	s.mu.Lock()
	defer s.mu.Unlock()
	var full error
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var held int64
		err := tx.QueryRowContext(ctx, s.q(`SELECT size FROM jobs WHERE name = $1 AND state = $2 AND created_ms = $3 AND digest = $4`),
			name, Running, job.Created.UnixMilli(), job.Digest).Scan(&held)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("job %s: %w", name, ErrNotClaimed)
		} else if err != nil {
			return fmt.Errorf("reading job %s: %w", name, err)
		}
		size := int64(len(job.Tenant)+len(job.Key)+len(job.Digest)+len(result)) + jobOverhead
		ok, _, err := s.makeRoom(ctx, tx, 0, size-held)
		if err != nil {
			return err
		}
		if !ok {
			full = fmt.Errorf("keeping a %d-byte result: %w", len(result), ErrFull)
			_, err := s.exec(ctx, tx, `DELETE FROM jobs WHERE name = $1`, name)
			return err
		}
		_, err = s.exec(ctx, tx, `UPDATE jobs SET state = $1, finished_ms = $2, result = $3, size = $4 WHERE name = $5`,
			Done, s.cfg.Now().UnixMilli(), string(result), size, name)
		return err
	})
	if err != nil {
		return fmt.Errorf("recording job %s: %w", name, err)
	}
	return full
}

// Forget is Store.Forget.
func (s *SQLStore) Forget(job Job) error {
	ctx := context.Background()
	name := rowName(job.Tenant, job.Key)
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.exec(ctx, s.db, `DELETE FROM jobs WHERE name = $1 AND state = $2 AND created_ms = $3 AND digest = $4`,
		name, Running, job.Created.UnixMilli(), job.Digest)
	switch {
	case err != nil:
		return fmt.Errorf("deleting job %s: %w", name, err)
	case n == 0:
		return fmt.Errorf("job %s: %w", name, ErrNotClaimed)
	}
	return nil
}

// Len is the number of jobs kept, running ones included; -1 when the
// database cannot say.
func (s *SQLStore) Len() int {
	var n int
	if err := s.db.QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&n); err != nil {
		s.log.Warn("counting jobs", "error", err)
		return -1
	}
	return n
}

// Collect deletes the expired jobs now and returns how many.
func (s *SQLStore) Collect() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.expire(context.Background(), s.db, s.cfg.Now().UnixMilli())
	if err != nil {
		s.log.Warn("deleting expired jobs", "error", err)
	}
	return n
}

// Start runs the collector until Close, as Store.Start.
func (s *SQLStore) Start() {
	s.startOnce.Do(func() {
		go collectEvery(s.cfg.GCInterval, s.stop, s.stopped, s.Collect, s.log)
	})
}

// Close stops the collector and waits for it; the database stays open.
func (s *SQLStore) Close() {
	s.closeOnce.Do(func() { close(s.stop) })
	started := true
	s.startOnce.Do(func() { started = false })
	if started {
		<-s.stopped
	}
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// expire deletes the finished jobs whose TTL has passed at now.
func (s *SQLStore) expire(ctx context.Context, e execer, now int64) (int, error) {
	n, err := s.exec(ctx, e, `DELETE FROM jobs WHERE state <> $1 AND finished_ms <= $2`, Running, now-s.cfg.TTL.Milliseconds())
	if err != nil {
		return 0, fmt.Errorf("deleting expired jobs: %w", err)
	}
	return int(n), nil
}

// makeRoom evicts the oldest finished jobs until jobs more of them and
// bytes more bytes fit; false when they cannot.
func (s *SQLStore) makeRoom(ctx context.Context, e execer, jobs int, bytes int64) (bool, int, error) {
	evicted := 0
	for {
		n, size, err := s.usage(ctx, e)
		if err != nil {
			return false, evicted, err
		}
		if n+jobs <= s.cfg.MaxJobs && size+bytes <= s.cfg.MaxBytes {
			return true, evicted, nil
		}
		gone, err := s.exec(ctx, e, `DELETE FROM jobs WHERE name IN
			(SELECT name FROM jobs WHERE state <> $1 ORDER BY finished_ms, name LIMIT 1)`, Running)
		if err != nil {
			return false, evicted, fmt.Errorf("evicting a job: %w", err)
		}
		if gone == 0 {
			return false, evicted, nil
		}
		evicted++
	}
}

// usage is the jobs kept and their sizes together.
func (s *SQLStore) usage(ctx context.Context, e execer) (int, int64, error) {
	var (
		n    int
		size int64
	)
	if err := e.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM jobs`).Scan(&n, &size); err != nil {
		return 0, 0, fmt.Errorf("sizing the jobs table: %w", err)
	}
	return n, size, nil
}

func (s *SQLStore) exec(ctx context.Context, e execer, q string, args ...any) (int64, error) {
	res, err := e.ExecContext(ctx, s.q(q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// tx runs f in a transaction, committed when f returns nil.
func (s *SQLStore) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return errors.Join(err, ignoreDone(tx.Rollback()))
	}
	return tx.Commit()
}

func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

// q writes query's $1, $2 … placeholders the dialect's way.
func (s *SQLStore) q(query string) string {
	if s.dialect == DialectSQLite {
		return strings.ReplaceAll(query, "$", "?")
	}
	return query
}

// rowName is a job's key in the table: the hash its file is named by.
func rowName(tenant, key string) string {
	return strings.TrimSuffix(fileName(tenant, key), fileExt)
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// writerState is the writer goroutine's own.
type writerState struct {
	lastPrune  time.Time
	lastErrLog time.Time // zero: the last write succeeded or none failed yet
	failing    bool
	suppressed int // error lines not logged since lastErrLog
	lost       int // records dropped since the last error line
}

// loop is the writer: it writes the queue in batches, answers Flush,
// prunes when due and, at Close, writes what is left.
func (s *Store) loop() {
	defer close(s.done)
	tick := time.NewTicker(s.cfg.PruneInterval)
	defer tick.Stop()
	batch := make([]any, 0, s.cfg.BatchSize)
	for {
		select {
		case rec := <-s.q:
			batch = s.fill(append(batch[:0], rec))
			s.write(batch)
			s.pruneIfDue()
		case ack := <-s.flushReq:
			batch = s.writeQueued(batch)
			s.pruneIfDue()
			close(ack)
		case <-tick.C:
			s.pruneIfDue()
		case <-s.stop:
			s.writeQueued(batch)
			return
		}
	}
}

// fill adds to batch what the queue holds, up to BatchSize, without
// waiting.
func (s *Store) fill(batch []any) []any {
	for len(batch) < s.cfg.BatchSize {
		select {
		case rec := <-s.q:
			batch = append(batch, rec)
		default:
			return batch
		}
	}
	return batch
}

// writeQueued writes the queue as it is, batch by batch; once writeCtx
// has ended, what is left is dropped as closed.
func (s *Store) writeQueued(batch []any) []any {
	for len(s.q) > 0 {
		batch = s.fill(batch[:0])
		if s.writeCtx.Err() != nil {
			s.droppedClosed.Add(float64(len(batch)))
			continue
		}
		s.write(batch)
	}
	return batch
}

// write inserts batch in one transaction; a failure drops the batch,
// counts it and logs.
func (s *Store) write(batch []any) {
	if s.cfg.beforeWrite != nil {
		s.cfg.beforeWrite(s.writeCtx)
	}
	counts, err := s.insert(s.writeCtx, batch)
	if err != nil {
		s.m.writeErrors.Inc()
		if s.writeCtx.Err() != nil {
			s.droppedClosed.Add(float64(len(batch)))
			return
		}
		s.droppedWrite.Add(float64(len(batch)))
		s.logFailure("writing records", err, len(batch))
		return
	}
	for table, n := range counts {
		if n > 0 {
			s.m.written.WithLabelValues(table).Add(float64(n))
		}
	}
	if s.w.failing {
		s.w.failing = false
		s.log.Info("history database writes succeed again", "dropped_since_last_log", s.w.lost)
		s.w.lastErrLog, s.w.suppressed, s.w.lost = time.Time{}, 0, 0
	}
}

// logFailure logs a failed write, at most once every errorLogEvery: the
// lines between are counted and the next line says how many there were.
func (s *Store) logFailure(what string, err error, lost int) {
	s.w.failing = true
	s.w.lost += lost
	now := s.cfg.Now()
	if !s.w.lastErrLog.IsZero() && now.Sub(s.w.lastErrLog) < errorLogEvery {
		s.w.suppressed++
		return
	}
	s.log.Error("history database "+what+" failed; runs go on, their records are dropped",
		"error", err, "dropped", s.w.lost, "failures_not_logged", s.w.suppressed)
	s.w.lastErrLog, s.w.suppressed, s.w.lost = now, 0, 0
}

// Tables and their insert statements, columns in the order insertArgs
// gives them.
const (
	tableRuns          = "runs"
	tableSessionEvents = "session_events"
	tableAuthFailures  = "auth_failures"
	tableAdminActions  = "admin_actions"
)

var insertSQL = map[string]string{
	tableRuns: `INSERT INTO runs (kind, at_ms, tenant, door, template, runtime, start_kind,
		queue_ms, acquire_ms, start_ms, exec_ms, total_ms, reason, error_code, exit_code,
		stdout_bytes, stderr_bytes, code_sha256, code, session_id, network)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
	tableSessionEvents: `INSERT INTO session_events (at_ms, tenant, door, session_id, template, event, detail)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
	tableAuthFailures: `INSERT INTO auth_failures (at_ms, door, client, reason) VALUES ($1, $2, $3, $4)`,
	tableAdminActions: `INSERT INTO admin_actions (at_ms, tenant, door, action, target, detail)
		VALUES ($1, $2, $3, $4, $5, $6)`,
}

// insertArgs is rec's table and its row.
func insertArgs(rec any) (string, []any) {
	switch r := rec.(type) {
	case Run:
		return tableRuns, []any{string(r.Kind), r.At.UnixMilli(), r.Tenant, r.Door, r.Template, r.Runtime, r.StartKind,
			r.QueueMS, r.AcquireMS, r.StartMS, r.ExecMS, r.TotalMS, r.Reason, r.Error, r.ExitCode,
			r.StdoutBytes, r.StderrBytes, r.CodeSHA256, r.Code, r.SessionID, r.Network}
	case SessionEvent:
		return tableSessionEvents, []any{r.At.UnixMilli(), r.Tenant, r.Door, r.SessionID, r.Template, r.Event, r.Detail}
	case AuthFailure:
		return tableAuthFailures, []any{r.At.UnixMilli(), r.Door, r.Client, r.Reason}
	case AdminAction:
		return tableAdminActions, []any{r.At.UnixMilli(), r.Tenant, r.Door, r.Action, r.Target, r.Detail}
	}
	panic(fmt.Sprintf("store: record of type %T", rec))
}

// insert writes batch in one transaction, one prepared statement a
// table, and returns the rows written by table.
func (s *Store) insert(ctx context.Context, batch []any) (_ map[string]int, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("beginning a batch: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	stmts := map[string]*sql.Stmt{}
	counts := map[string]int{}
	for _, rec := range batch {
		table, args := insertArgs(rec)
		st, ok := stmts[table]
		if !ok {
			if st, err = tx.PrepareContext(ctx, rebind(s.cfg.Driver, insertSQL[table])); err != nil {
				return nil, fmt.Errorf("preparing the insert into %s: %w", table, err)
			}
			defer st.Close()
			stmts[table] = st
		}
		if _, err = st.ExecContext(ctx, args...); err != nil {
			return nil, fmt.Errorf("inserting into %s: %w", table, err)
		}
		counts[table]++
	}
	if err = tx.Commit(); err != nil {
		return nil, fmt.Errorf("committing a batch of %d: %w", len(batch), err)
	}
	return counts, nil
}

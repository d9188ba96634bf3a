package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Scope says whose rows a query sees: Tenant's ("" is the anonymous
// tenant), or every tenant's with All (an operator's view). The zero
// Scope is the anonymous tenant's alone.
type Scope struct {
	Tenant string
	All    bool
}

func (sc Scope) addTo(w *where) {
	if !sc.All {
		w.add("tenant = ?", sc.Tenant)
	}
}

// addWindow adds [since, until): a zero bound is open.
func addWindow(w *where, since, until time.Time) {
	if !since.IsZero() {
		w.add("at_ms >= ?", since.UnixMilli())
	}
	if !until.IsZero() {
		w.add("at_ms < ?", until.UnixMilli())
	}
}

// RunFilter selects runs and cells. Empty fields match anything.
type RunFilter struct {
	Scope
	Kind      Kind
	Door      string
	Template  string
	Reason    string
	SessionID string
	// Since and Until bound the time a run ended: [Since, Until).
	Since, Until time.Time
	// Limit is the page size: 0 is DefaultPageSize, at most MaxPageSize.
	Limit int
	// Cursor is the Next of the page before; "" for the first page.
	Cursor string
}

// RunPage is one page of runs, newest first. Next is the cursor of the
// page after, "" when there is none.
type RunPage struct {
	Runs []Run
	Next string
}

const runColumns = `id, kind, at_ms, tenant, door, template, runtime, start_kind,
	queue_ms, acquire_ms, start_ms, exec_ms, total_ms, reason, error_code, exit_code,
	stdout_bytes, stderr_bytes, code_sha256, code, session_id, network`

// Runs is a page of the runs and cells f selects, newest first. A
// cursor Runs did not hand out is ErrBadCursor, a limit out of range
// ErrBadFilter.
func (s *Store) Runs(ctx context.Context, f RunFilter) (RunPage, error) {
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return RunPage{}, err
	}
	after, first, err := parseCursor(f.Cursor)
	if err != nil {
		return RunPage{}, err
	}
	var w where
	f.Scope.addTo(&w)
	w.addIf("kind", string(f.Kind))
	w.addIf("door", f.Door)
	w.addIf("template", f.Template)
	w.addIf("reason", f.Reason)
	w.addIf("session_id", f.SessionID)
	addWindow(&w, f.Since, f.Until)
	if !first {
		w.addAfter(after)
	}
	q := `SELECT ` + runColumns + ` FROM runs` + w.String() +
		fmt.Sprintf(` ORDER BY at_ms DESC, id DESC LIMIT %d`, limit+1)
	rows, err := s.db.QueryContext(ctx, rebind(s.cfg.Driver, q), w.args...)
	if err != nil {
		return RunPage{}, fmt.Errorf("querying runs: %w", err)
	}
	defer rows.Close()
	page := RunPage{Runs: []Run{}}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return RunPage{}, err
		}
		page.Runs = append(page.Runs, r)
	}
	if err := rows.Err(); err != nil {
		return RunPage{}, fmt.Errorf("querying runs: %w", err)
	}
	if len(page.Runs) > limit {
		page.Runs = page.Runs[:limit]
		last := page.Runs[limit-1]
		page.Next = cursor{atMS: last.At.UnixMilli(), id: last.ID}.String()
	}
	return page, nil
}

func scanRun(rows *sql.Rows) (Run, error) {
	var r Run
	var kind string
	var at int64
	err := rows.Scan(&r.ID, &kind, &at, &r.Tenant, &r.Door, &r.Template, &r.Runtime, &r.StartKind,
		&r.QueueMS, &r.AcquireMS, &r.StartMS, &r.ExecMS, &r.TotalMS, &r.Reason, &r.Error, &r.ExitCode,
		&r.StdoutBytes, &r.StderrBytes, &r.CodeSHA256, &r.Code, &r.SessionID, &r.Network)
	if err != nil {
		return r, fmt.Errorf("reading a run: %w", err)
	}
	r.Kind, r.At = Kind(kind), time.UnixMilli(at).UTC()
	return r, nil
}

// EventFilter selects session events. Empty fields match anything.
type EventFilter struct {
	Scope
	SessionID    string
	Event        string
	Since, Until time.Time
	Limit        int
	Cursor       string
}

// EventPage is one page of session events, newest first.
type EventPage struct {
	Events []SessionEvent
	Next   string
}

// SessionEvents is a page of the session events f selects, newest first.
func (s *Store) SessionEvents(ctx context.Context, f EventFilter) (EventPage, error) {
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return EventPage{}, err
	}
	after, first, err := parseCursor(f.Cursor)
	if err != nil {
		return EventPage{}, err
	}
	var w where
	f.Scope.addTo(&w)
	w.addIf("session_id", f.SessionID)
	w.addIf("event", f.Event)
	addWindow(&w, f.Since, f.Until)
	if !first {
		w.addAfter(after)
	}
	q := `SELECT id, at_ms, tenant, door, session_id, template, event, detail FROM session_events` + w.String() +
		fmt.Sprintf(` ORDER BY at_ms DESC, id DESC LIMIT %d`, limit+1)
	rows, err := s.db.QueryContext(ctx, rebind(s.cfg.Driver, q), w.args...)
	if err != nil {
		return EventPage{}, fmt.Errorf("querying session events: %w", err)
	}
	defer rows.Close()
	page := EventPage{Events: []SessionEvent{}}
	for rows.Next() {
		var e SessionEvent
		var at int64
		if err := rows.Scan(&e.ID, &at, &e.Tenant, &e.Door, &e.SessionID, &e.Template, &e.Event, &e.Detail); err != nil {
			return EventPage{}, fmt.Errorf("reading a session event: %w", err)
		}
		e.At = time.UnixMilli(at).UTC()
		page.Events = append(page.Events, e)
	}
	if err := rows.Err(); err != nil {
		return EventPage{}, fmt.Errorf("querying session events: %w", err)
	}
	if len(page.Events) > limit {
		page.Events = page.Events[:limit]
		last := page.Events[limit-1]
		page.Next = cursor{atMS: last.At.UnixMilli(), id: last.ID}.String()
	}
	return page, nil
}

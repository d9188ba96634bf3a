package store

import (
	"context"
	"fmt"
	"time"
)

// Bounds on an aggregate query.
const (
	// DefaultWindow is the window when AggregateFilter.Since is zero.
	DefaultWindow = time.Hour
	// MaxGroups bounds the (start kind, template) groups answered.
	MaxGroups = 1000
)

// AggregateFilter selects the rows an aggregate is computed over: those
// that ran (no Error) in [Since, Until). A zero Until is now, a zero
// Since DefaultWindow before Until; Kind "" is KindRun.
type AggregateFilter struct {
	Scope
	Kind         Kind
	Since, Until time.Time
}

// Aggregate is the latency of one start kind on one template over a
// window: nearest-rank percentiles in milliseconds.
type Aggregate struct {
	StartKind string
	Template  string
	Count     int64

	TotalP50, TotalP99     int64
	AcquireP50, AcquireP99 int64
	StartP50, StartP99     int64
}

// Aggregates is p50 and p99 of total, acquire and start milliseconds
// grouped by start kind and template, ordered by both, at most MaxGroups.
//
// Percentiles are nearest-rank, computed in SQL both dialects share:
// window functions number each group's rows in the order of each
// measure (ROW_NUMBER) and count them (COUNT), and the p-th percentile
// of n rows is the row ranked ceil(p·n/100), written (p·n+99)/100 in
// integer division since SQLite has no CEIL everywhere. PostgreSQL's
// percentile_disc would give the same value, but SQLite lacks it.
func (s *Store) Aggregates(ctx context.Context, f AggregateFilter) ([]Aggregate, error) {
	until := f.Until
	if until.IsZero() {
		until = s.cfg.Now()
	}
	since := f.Since
	if since.IsZero() {
		since = until.Add(-DefaultWindow)
	}
	if !since.Before(until) {
		return nil, fmt.Errorf("%w: the window's start %s is not before its end %s", ErrBadFilter,
			since.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
	}
	kind := f.Kind
	if kind == "" {
		kind = KindRun
	}
	var w where
	f.Scope.addTo(&w)
	w.add("kind = ?", string(kind))
	w.add("error_code = ?", "")
	addWindow(&w, since, until)
	q := `WITH w AS (
		SELECT start_kind, template, total_ms, acquire_ms, start_ms,
			COUNT(*) OVER g AS n,
			ROW_NUMBER() OVER (g ORDER BY total_ms) AS rt,
			ROW_NUMBER() OVER (g ORDER BY acquire_ms) AS ra,
			ROW_NUMBER() OVER (g ORDER BY start_ms) AS rs
		FROM runs` + w.String() + `
		WINDOW g AS (PARTITION BY start_kind, template))
	SELECT start_kind, template, MAX(n),
		MAX(CASE WHEN rt = (50*n+99)/100 THEN total_ms END),
		MAX(CASE WHEN rt = (99*n+99)/100 THEN total_ms END),
		MAX(CASE WHEN ra = (50*n+99)/100 THEN acquire_ms END),
		MAX(CASE WHEN ra = (99*n+99)/100 THEN acquire_ms END),
		MAX(CASE WHEN rs = (50*n+99)/100 THEN start_ms END),
		MAX(CASE WHEN rs = (99*n+99)/100 THEN start_ms END)
	FROM w GROUP BY start_kind, template ORDER BY start_kind, template` + fmt.Sprintf(` LIMIT %d`, MaxGroups)
	rows, err := s.db.QueryContext(ctx, rebind(s.cfg.Driver, q), w.args...)
	if err != nil {
		return nil, fmt.Errorf("querying aggregates: %w", err)
	}
	defer rows.Close()
	out := []Aggregate{}
	for rows.Next() {
		var a Aggregate
		if err := rows.Scan(&a.StartKind, &a.Template, &a.Count, &a.TotalP50, &a.TotalP99,
			&a.AcquireP50, &a.AcquireP99, &a.StartP50, &a.StartP99); err != nil {
			return nil, fmt.Errorf("reading an aggregate: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("querying aggregates: %w", err)
	}
	return out, nil
}

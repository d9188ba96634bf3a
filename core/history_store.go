package core

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/egress"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/store"
)

// The durable history: every run and cell from every door, session
// events, failed authentications and admin actions go to Config.Store
// (nil: none are kept). Recording never blocks and never fails a call:
// the store queues and drops, counted in its own metrics.

// HistoryQuery says whose history a query reads: the caller's own
// tenant, or with All (admin scope only) every tenant's, narrowed to
// Tenant when it is not empty.
type HistoryQuery struct {
	Tenant string
	All    bool
}

// errHistoryOff is the answer of a history query on a server that keeps
// none.
var errHistoryOff = &Error{Kind: KindNotImplemented, Code: "history_off",
	Message: "this server keeps no history (start it with a history database: --history-db)"}

// HistoryEnabled reports whether runs are recorded.
func (s *Service) HistoryEnabled() bool { return s.cfg.Store != nil }

// scope checks q against the caller and returns the store's scope:
// another tenant's rows, or all of them, need the admin scope.
func (s *Service) scope(c Caller, q HistoryQuery) (store.Scope, error) {
	if s.cfg.Store == nil {
		return store.Scope{}, errHistoryOff
	}
	if !q.All && (q.Tenant == "" || q.Tenant == c.Tenant) {
		return store.Scope{Tenant: c.Tenant}, nil
	}
	if err := s.Authorize(c, ScopeAdmin); err != nil {
		return store.Scope{}, err
	}
	s.recordAdmin(c, "read_history", q.Tenant, "")
	if q.Tenant != "" {
		return store.Scope{Tenant: q.Tenant}, nil
	}
	return store.Scope{All: true}, nil
}

// historyError maps a store query's error to the core's.
func historyError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrBadCursor):
		return &Error{Kind: KindInvalid, Code: "invalid_cursor", Message: "the cursor was not handed out by this server", cause: err}
	case errors.Is(err, store.ErrBadFilter):
		return &Error{Kind: KindInvalid, Code: "invalid_request", Message: err.Error(), cause: err}
	case errors.Is(err, context.Canceled):
		return Classify(err)
	}
	return &Error{Kind: KindUnavailable, Code: "history_unavailable", RetryAfter: 5 * time.Second,
		Message: "the history database did not answer; runs go on, retry the query later", cause: err}
}

// RunHistory is a page of the runs and cells f selects, newest first,
// within q's scope (f's own Scope is replaced).
func (s *Service) RunHistory(ctx context.Context, c Caller, q HistoryQuery, f store.RunFilter) (store.RunPage, error) {
	var err error
	if f.Scope, err = s.scope(c, q); err != nil {
		return store.RunPage{}, err
	}
	page, err := s.cfg.Store.Runs(ctx, f)
	return page, historyError(err)
}

// SessionEventHistory is a page of session events, newest first, within
// q's scope.
func (s *Service) SessionEventHistory(ctx context.Context, c Caller, q HistoryQuery, f store.EventFilter) (store.EventPage, error) {
	var err error
	if f.Scope, err = s.scope(c, q); err != nil {
		return store.EventPage{}, err
	}
	page, err := s.cfg.Store.SessionEvents(ctx, f)
	return page, historyError(err)
}

// RunAggregates is p50 and p99 latency by start kind and template over
// f's window, within q's scope.
func (s *Service) RunAggregates(ctx context.Context, c Caller, q HistoryQuery, f store.AggregateFilter) ([]store.Aggregate, error) {
	var err error
	if f.Scope, err = s.scope(c, q); err != nil {
		return nil, err
	}
	out, err := s.cfg.Store.Aggregates(ctx, f)
	return out, historyError(err)
}

// errorCode is err's core code, "" for nil.
func errorCode(err error) string {
	if err == nil {
		return ""
	}
	return Classify(err).Code
}

// recordRun records a one-shot run as it ended: its outcome, or the
// core's error code when it could not run, and the egress policy it was
// given (nil: no network).
func (s *Service) recordRun(c Caller, code string, pol *egress.Policy, res RunResult, err error) {
	if s.cfg.Store == nil {
		return
	}
	o := res.Outcome
	r := store.Run{Kind: store.KindRun, At: s.cfg.Now(), Tenant: c.Tenant, Door: c.Door,
		Template: res.Template, Runtime: res.Runtime, StartKind: string(o.Kind),
		QueueMS: o.Timing.Queue.Milliseconds(), AcquireMS: o.Timing.Acquire.Milliseconds(),
		StartMS: o.Timing.Start.Milliseconds(), ExecMS: o.Timing.Exec.Milliseconds(), TotalMS: o.Timing.Total.Milliseconds(),
		Error: errorCode(err), Code: code}
	if pol != nil {
		r.Network = pol.String()
	}
	if err == nil {
		r.Reason, r.ExitCode = string(o.Result.Reason), o.Result.ExitCode
		r.StdoutBytes, r.StderrBytes = int64(len(o.Result.Stdout)), int64(len(o.Result.Stderr))
	}
	s.cfg.Store.RecordRun(r)
}

// cellSizes counts the stream bytes of a cell's events as they pass.
type cellSizes struct{ stdout, stderr int64 }

func (z *cellSizes) wrap(events func(runner.Event)) func(runner.Event) {
	return func(ev runner.Event) {
		if ev.Type == runner.EventStream {
			if ev.Stream == runner.Stderr {
				z.stderr += int64(len(ev.Text))
			} else {
				z.stdout += int64(len(ev.Text))
			}
		}
		if events != nil {
			events(ev)
		}
	}
}

// cellNetwork is the egress policy the caller's session id has as a cell
// is called, in the String form the history keeps: the session's policy
// narrowed by this server's allowance, as its proxy enforces it; "" for
// a session without a network (or none of the caller's). A later
// SetSessionNetwork changes it for later cells.
func (s *Service) cellNetwork(c Caller, id string) string {
	if s.cfg.Store == nil {
		return ""
	}
	info, err := s.kernels.Get(c.Tenant, id)
	if err != nil || info.Network == "" {
		return ""
	}
	pol, err := s.sessionPolicy(info.Network)
	if err != nil {
		return "" // its proxy could not be served either
	}
	return pol.String()
}

// RecordedNetwork reads a history row's Network (store.Run), the String
// form of the policy the run or cell had; ok is false for one without a
// network.
func RecordedNetwork(rec string) (pol NetworkPolicy, ok bool) {
	if rec == "" {
		return NetworkPolicy{}, false
	}
	allowPart, denyPart, _ := strings.Cut(rec, ";")
	allow := strings.Fields(allowPart)
	if len(allow) > 0 && (allow[0] == "allow" || allow[0] == egress.ModeNone) {
		allow = allow[1:]
	}
	deny := strings.Fields(denyPart)
	if len(deny) > 0 && deny[0] == "deny" {
		deny = deny[1:]
	}
	pol, err := egress.NewPolicy(allow, deny)
	if err != nil { // not written by this core: show it allowing nothing
		return NetworkPolicy{}, true
	}
	return pol, true
}

// recordCell records a session cell as it ended, with network the
// session's policy as it was called (cellNetwork), and the session event
// a lost kernel is. A call that found no session of the caller's (no
// template in x) reached no kernel: like a run refused by its checks, it
// is not a cell.
func (s *Service) recordCell(c Caller, id, code, network string, x kernels.Execution, z *cellSizes, took time.Duration, err error) {
	if s.cfg.Store == nil || x.Template == "" {
		return
	}
	r := store.Run{Kind: store.KindCell, At: s.cfg.Now(), Tenant: c.Tenant, Door: c.Door, SessionID: id,
		Template: x.Template, Runtime: s.runtimeOf[x.Template], StartKind: "kernel",
		QueueMS: x.Queue.Milliseconds(), ExecMS: x.Exec.Milliseconds(), TotalMS: took.Milliseconds(),
		Reason: string(x.Reason), Error: errorCode(err), Code: code,
		StdoutBytes: z.stdout, StderrBytes: z.stderr, Network: network}
	if x.Status == "error" && r.Reason == "" {
		r.Reason = "error"
	}
	if x.Status == "" {
		r.Reason = ""
	}
	s.cfg.Store.RecordRun(r)
	switch {
	case x.StateLost && x.Restarted:
		s.recordSession(c, id, x.Template, store.EventStateLost, x.LostReason)
	case x.StateLost:
		s.recordSession(c, id, x.Template, store.EventLost, x.LostReason)
	}
}

// recordSession records one session event.
func (s *Service) recordSession(c Caller, id, template, event, detail string) {
	if s.cfg.Store == nil {
		return
	}
	s.cfg.Store.RecordSessionEvent(store.SessionEvent{At: s.cfg.Now(), Tenant: c.Tenant, Door: c.Door,
		SessionID: id, Template: template, Event: event, Detail: detail})
}

// recordAdmin records one use of the admin scope.
func (s *Service) recordAdmin(c Caller, action, target, detail string) {
	if s.cfg.Store == nil {
		return
	}
	s.cfg.Store.RecordAdminAction(store.AdminAction{At: s.cfg.Now(), Tenant: c.Tenant, Door: c.Door,
		Action: action, Target: target, Detail: detail})
}

// recordAuthFailure records one failed authentication.
func (s *Service) recordAuthFailure(door, client string, err error) {
	if s.cfg.Store == nil {
		return
	}
	s.cfg.Store.RecordAuthFailure(store.AuthFailure{At: s.cfg.Now(), Door: door, Client: client, Reason: errorCode(err)})
}

// SessionEndRecorder is the kernels' OnEnd for a server whose history is
// st: a session that expired, was lost or ended with the server becomes
// a session event. It is nil when st is.
func SessionEndRecorder(st *store.Store, now func() time.Time) func(owner, id, template, why string) {
	if st == nil {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return func(owner, id, template, why string) {
		ev := store.SessionEvent{At: now(), Tenant: owner, SessionID: id, Template: template, Event: store.EventExpired, Detail: why}
		switch {
		case strings.HasPrefix(why, "lost: "):
			ev.Event, ev.Detail = store.EventLost, strings.TrimPrefix(why, "lost: ")
		case why != "expired":
			ev.Event = store.EventClosed
		}
		st.RecordSessionEvent(ev)
	}
}

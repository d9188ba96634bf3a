package graphqldoor

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/store"
)

// The resolvers of schema.graphql's types: each turns one core value into
// an object, and each root field is one call into the core as the caller.

type resolver struct {
	schema *ast.Schema
	core   Core
	caller core.Caller
	now    func() time.Time
}

// query is the root object.
func (r *resolver) query(ctx context.Context, field string, args map[string]any) (any, error) {
	switch field {
	case "__schema":
		return schemaObject(r.schema), nil
	case "__type":
		if d := r.schema.Types[str(args["name"])]; d != nil {
			return namedType(r.schema, d), nil
		}
		return nil, nil
	case "viewer":
		return r.viewer(), nil
	case "templates":
		out := []any{}
		for _, t := range r.core.Templates() {
			out = append(out, templateObject(t))
		}
		return out, nil
	case "template":
		name, _ := args["name"].(string)
		for _, t := range r.core.Templates() {
			if t.Name == name {
				return templateObject(t), nil
			}
		}
		return nil, nil
	case "pools":
		out := []any{}
		for _, t := range r.core.Templates() {
			out = append(out, poolObject(t.Name, t.Pool))
		}
		return out, nil
	case "sessions":
		var sessions []core.Session
		if args["allTenants"] == true {
			var err error
			if sessions, err = r.core.AllSessions(r.caller); err != nil {
				return nil, err
			}
		} else {
			sessions = r.core.Sessions(r.caller)
		}
		out := make([]any, 0, len(sessions))
		for _, s := range sessions {
			out = append(out, r.sessionObject(s))
		}
		return out, nil
	case "session":
		id, _ := args["id"].(string)
		s, err := r.core.Session(r.caller, id)
		if err != nil {
			if e := core.Classify(err); e.Kind == core.KindNotFound {
				return nil, nil
			}
			return nil, err
		}
		return r.sessionObject(s), nil
	case "runs":
		return r.runs(ctx, args, "")
	case "sessionEvents":
		return r.events(ctx, args)
	case "aggregates":
		return r.aggregates(ctx, args)
	}
	return nil, unknownField("Query", field)
}

func (r *resolver) viewer() object {
	return func(_ context.Context, field string, _ map[string]any) (any, error) {
		switch field {
		case "tenant":
			return r.caller.Tenant, nil
		case "scopes":
			out := []any{}
			for _, s := range r.caller.Scopes {
				out = append(out, s)
			}
			return out, nil
		case "historyEnabled":
			return r.core.HistoryEnabled(), nil
		}
		return nil, unknownField("Viewer", field)
	}
}

// fields is an object whose fields are values known up front.
func fields(typeName string, m map[string]any) object {
	return func(_ context.Context, field string, _ map[string]any) (any, error) {
		v, ok := m[field]
		if !ok {
			return nil, unknownField(typeName, field)
		}
		return v, nil
	}
}

func list(ss []string) []any {
	out := make([]any, 0, len(ss))
	for _, s := range ss {
		out = append(out, s)
	}
	return out
}

func templateObject(t core.TemplateInfo) object {
	versions := []any{}
	for _, name := range slices.Sorted(maps.Keys(t.Versions)) {
		versions = append(versions, fields("Version", map[string]any{"name": name, "version": t.Versions[name]}))
	}
	l := t.Limits
	return fields("Template", map[string]any{
		"name": t.Name, "language": t.Language, "description": t.Description, "runtime": t.Runtime,
		"versions": versions,
		"limits": fields("Limits", map[string]any{"memoryMB": l.MemoryMB, "processes": l.Processes, "cpus": l.CPUs,
			"diskMB": l.DiskMB, "openFiles": l.OpenFiles, "timeoutMS": l.TimeoutMS}),
		"warmImports": list(t.WarmImports), "defaultFor": list(t.DefaultFor),
		"network": policyObject(t.Network),
		"pool":    poolObject(t.Name, t.Pool),
	})
}

func policyObject(p core.NetworkPolicy) object {
	// The policy's JSON form is its public one (mode, canonical rules).
	var j struct {
		Mode        string
		Allow, Deny []string
	}
	if raw, err := json.Marshal(p); err == nil {
		_ = json.Unmarshal(raw, &j)
	}
	return fields("NetworkPolicy", map[string]any{"mode": j.Mode, "allow": list(j.Allow), "deny": list(j.Deny)})
}

func poolObject(template string, p core.PoolInfo) object {
	var hitRate any
	if n := p.Hits + p.Misses; n > 0 {
		hitRate = float64(p.Hits) / float64(n)
	}
	return fields("Pool", map[string]any{
		"template": template, "target": p.Target, "floor": p.Floor, "ceiling": p.Ceiling, "ready": p.Ready,
		"inUse": p.InUse, "starting": p.Starting, "waiting": p.Waiting, "hits": p.Hits, "misses": p.Misses,
		"hitRate": hitRate, "restores": p.Restores, "coldStarts": p.ColdStarts, "restoreFailures": p.RestoreFailures,
		"snapshot": p.Snapshot, "image": p.Image, "healthy": p.Healthy,
	})
}

func (r *resolver) sessionObject(s core.Session) object {
	m := map[string]any{
		"id": s.ID, "tenant": s.Owner, "template": s.Template, "language": s.Language, "runtime": s.Runtime,
		"state": s.State, "createdAt": stamp(s.CreatedAt), "lastUsed": stamp(s.LastUsed),
		"expiresAt": stamp(s.ExpiresAt), "ttlSeconds": int64(s.TTL / time.Second),
		"executionCount": s.ExecutionCount, "queued": s.Queued, "restarts": s.Restarts, "start": string(s.Start),
	}
	return func(ctx context.Context, field string, args map[string]any) (any, error) {
		if field == "cells" {
			return r.runs(ctx, map[string]any{"first": args["first"], "after": args["after"],
				"filter": map[string]any{"kind": "CELL", "sessionId": s.ID}}, s.Owner)
		}
		v, ok := m[field]
		if !ok {
			return nil, unknownField("Session", field)
		}
		return v, nil
	}
}

// runs reads a page of the history; owner, when set, is the tenant whose
// session's cells these are (an admin may read another's session).
func (r *resolver) runs(ctx context.Context, args map[string]any, owner string) (any, error) {
	f, _ := args["filter"].(map[string]any)
	q := historyQuery(f)
	if owner != "" && owner != r.caller.Tenant {
		q = core.HistoryQuery{Tenant: owner}
	}
	rf := store.RunFilter{Door: str(f["door"]), Template: str(f["template"]), Reason: str(f["reason"]),
		SessionID: str(f["sessionId"]), Cursor: str(args["after"])}
	rf.Kind = runKind(f["kind"])
	var err error
	if rf.Since, rf.Until, err = window(f); err != nil {
		return nil, err
	}
	if rf.Limit, err = first(args); err != nil {
		return nil, err
	}
	page, err := r.core.RunHistory(ctx, r.caller, q, rf)
	if err != nil {
		return nil, err
	}
	items := make([]any, 0, len(page.Runs))
	for _, run := range page.Runs {
		items = append(items, runObject(run))
	}
	return fields("RunConnection", map[string]any{"items": items, "next": nullableStr(page.Next)}), nil
}

func runObject(r store.Run) object {
	kind := "RUN"
	if r.Kind == store.KindCell {
		kind = "CELL"
	}
	var network any
	if pol, ok := core.RecordedNetwork(r.Network); ok {
		network = policyObject(pol)
	}
	return fields("Run", map[string]any{
		"id": strconv.FormatInt(r.ID, 10), "kind": kind, "at": stamp(r.At), "tenant": r.Tenant, "door": r.Door,
		"template": r.Template, "runtime": r.Runtime, "startKind": r.StartKind,
		"queueMS": r.QueueMS, "acquireMS": r.AcquireMS, "startMS": r.StartMS, "execMS": r.ExecMS, "totalMS": r.TotalMS,
		"reason": nullableStr(r.Reason), "error": nullableStr(r.Error), "exitCode": r.ExitCode,
		"stdoutBytes": r.StdoutBytes, "stderrBytes": r.StderrBytes, "codeSHA256": r.CodeSHA256,
		"code": nullableStr(r.Code), "sessionId": nullableStr(r.SessionID), "network": network,
	})
}

func (r *resolver) events(ctx context.Context, args map[string]any) (any, error) {
	f, _ := args["filter"].(map[string]any)
	ef := store.EventFilter{SessionID: str(f["sessionId"]), Event: str(f["event"]), Cursor: str(args["after"])}
	var err error
	if ef.Since, ef.Until, err = window(f); err != nil {
		return nil, err
	}
	if ef.Limit, err = first(args); err != nil {
		return nil, err
	}
	page, err := r.core.SessionEventHistory(ctx, r.caller, historyQuery(f), ef)
	if err != nil {
		return nil, err
	}
	items := make([]any, 0, len(page.Events))
	for _, ev := range page.Events {
		items = append(items, fields("SessionEvent", map[string]any{
			"id": strconv.FormatInt(ev.ID, 10), "at": stamp(ev.At), "tenant": ev.Tenant, "door": nullableStr(ev.Door),
			"sessionId": ev.SessionID, "template": ev.Template, "event": ev.Event, "detail": nullableStr(ev.Detail),
		}))
	}
	return fields("SessionEventConnection", map[string]any{"items": items, "next": nullableStr(page.Next)}), nil
}

func (r *resolver) aggregates(ctx context.Context, args map[string]any) (any, error) {
	f, _ := args["filter"].(map[string]any)
	af := store.AggregateFilter{Kind: store.KindRun}
	if k := runKind(f["kind"]); k != "" {
		af.Kind = k
	}
	var err error
	if af.Since, af.Until, err = window(f); err != nil {
		return nil, err
	}
	if af.Until.IsZero() {
		af.Until = r.now()
	}
	if af.Since.IsZero() {
		af.Since = af.Until.Add(-time.Hour)
	}
	list, err := r.core.RunAggregates(ctx, r.caller, historyQuery(f), af)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(list))
	for _, a := range list {
		out = append(out, fields("Aggregate", map[string]any{
			"startKind": a.StartKind, "template": a.Template, "count": a.Count,
			"totalP50": a.TotalP50, "totalP99": a.TotalP99, "acquireP50": a.AcquireP50, "acquireP99": a.AcquireP99,
			"startP50": a.StartP50, "startP99": a.StartP99,
		}))
	}
	return out, nil
}

func historyQuery(f map[string]any) core.HistoryQuery {
	return core.HistoryQuery{Tenant: str(f["tenant"]), All: f["allTenants"] == true}
}

func runKind(v any) store.Kind {
	switch v {
	case "RUN":
		return store.KindRun
	case "CELL":
		return store.KindCell
	}
	return ""
}

func invalid(msg string) error { return &fieldError{Code: "invalid_request", Message: msg} }

// window reads a filter's since and until.
func window(f map[string]any) (since, until time.Time, err error) {
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"since", &since}, {"until", &until}} {
		s := str(f[p.name])
		if s == "" {
			continue
		}
		if *p.to, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return since, until, invalid(p.name + " must be an RFC 3339 time, such as 2026-12-07T10:00:00Z")
		}
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return since, until, invalid("since must be before until")
	}
	return since, until, nil
}

// first reads a page size: 1 to store.MaxPageSize.
func first(args map[string]any) (int, error) {
	v, present := args["first"]
	if !present || v == nil {
		return 50, nil
	}
	n, ok := toInt(v)
	if !ok || n < 1 || n > store.MaxPageSize {
		return 0, invalid("first must be 1 to " + strconv.Itoa(store.MaxPageSize))
	}
	return int(n), nil
}

// toInt reads an Int argument however it was decoded: a literal is an
// int64, a variable a json.Number or a float64.
func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func nullableStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

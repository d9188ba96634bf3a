package graphqldoor

import (
	"context"
	"net/netip"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/store"
)

// Core is the part of the door-neutral core the GraphQL door calls.
// *core.Service implements it.
type Core interface {
	AuthenticateWith(addr netip.Addr, door string, token func() (string, error)) (core.Caller, error)
	AdmitQuota(c core.Caller) (core.Quota, error)
	Templates() []core.TemplateInfo
	Sessions(c core.Caller) []core.Session
	AllSessions(c core.Caller) ([]core.Session, error)
	Session(c core.Caller, id string) (core.Session, error)
	HistoryEnabled() bool
	RunHistory(ctx context.Context, c core.Caller, q core.HistoryQuery, f store.RunFilter) (store.RunPage, error)
	SessionEventHistory(ctx context.Context, c core.Caller, q core.HistoryQuery, f store.EventFilter) (store.EventPage, error)
	RunAggregates(ctx context.Context, c core.Caller, q core.HistoryQuery, f store.AggregateFilter) ([]store.Aggregate, error)
}

var _ Core = (*core.Service)(nil)

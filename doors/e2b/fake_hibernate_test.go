package e2bdoor

import (
	"context"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
)

// The fake's hibernation, as the core's: a paused session is
// StateHibernated until resumed or until a call that needs its kernel
// (Execute here) wakes it; forks keep HibernateAtExpiry.

var errHibernationOff = &core.Error{Kind: core.KindNotImplemented, Code: "hibernation_off", Message: "hibernation is off on this server"}

// lookupAwake is lookup for a call that needs the kernel: a hibernated
// session wakes. Call it with f.mu held.
func (f *fakeCore) lookupAwake(c core.Caller, id string) (*fakeSession, error) {
	s, err := f.lookup(c, id)
	if err == nil && s.info.State == kernels.StateHibernated {
		s.info.State = kernels.StateIdle
		f.wakes++
	}
	return s, err
}

func (f *fakeCore) PauseSession(_ context.Context, c core.Caller, id string) (core.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.NoHibernation {
		return core.Session{}, errHibernationOff
	}
	s, err := f.lookup(c, id)
	if err != nil {
		return core.Session{}, err
	}
	if f.PauseErr != nil {
		return core.Session{}, f.PauseErr
	}
	s.info.State = kernels.StateHibernated
	return s.info, nil
}

func (f *fakeCore) ResumeSession(_ context.Context, c core.Caller, id string) (core.Session, core.Wake, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.lookup(c, id)
	if err != nil {
		return core.Session{}, core.Wake{}, err
	}
	asleep := s.info.State == kernels.StateHibernated
	if _, err := f.lookupAwake(c, id); err != nil {
		return core.Session{}, core.Wake{}, err
	}
	return s.info, core.Wake{Resumed: asleep, Took: time.Millisecond}, nil
}

func (f *fakeCore) ForkSession(_ context.Context, c core.Caller, id string, count int) ([]core.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.NoHibernation {
		return nil, errHibernationOff
	}
	p, err := f.lookupAwake(c, id)
	if err != nil {
		return nil, err
	}
	if count < 1 || count > 100 {
		return nil, &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Message: fmt.Sprintf("count must be between 1 and 100; got %d", count)}
	}
	out := make([]core.Session, 0, count)
	for range count {
		f.next++
		info := p.info
		info.ID = fmt.Sprintf("s%02d", f.next)
		info.CreatedAt = time.Date(2026, 12, 1, 12, 0, f.next, 0, time.UTC)
		info.ExpiresAt = info.CreatedAt.Add(info.TTL)
		files := map[string][]byte{}
		for k, v := range p.files {
			files[k] = v
		}
		f.sessions[info.ID] = &fakeSession{info: info, language: p.language, env: p.env, files: files, sleepAtExpiry: p.sleepAtExpiry}
		out = append(out, info)
	}
	return out, nil
}

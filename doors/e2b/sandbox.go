package e2bdoor

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/core"
)

// sandbox is one E2B sandbox: its main context is the Paddock session
// whose id is the sandbox's id; extra contexts are more sessions of the
// same owner. Each context is its own gVisor sandbox with its own
// /workspace: files and commands reach the main context's.
type sandbox struct {
	id       string      // the main session's id
	owner    core.Caller // the creator, as the core authenticated it
	template string      // the E2B template id the client asked for
	alias    string      // the Paddock template that serves it
	language string      // the main context's E2B language
	metadata map[string]string
	env      map[string]string
	started  time.Time
	// The template's limits, as E2B reports a sandbox's size.
	cpus, memoryMB, diskMB int

	envdToken, trafficToken string
	// autoPause: at its timeout the sandbox pauses, not dies (each of its
	// sessions hibernates at its expiry). autoResume: an in-sandbox call on the paused sandbox
	// wakes it (the core wakes a hibernated session on any call); without
	// it the door refuses the call as E2B does.
	autoPause, autoResume bool
	// network is what the sandbox asked of the network (network.go), for
	// every context it opens; nil: none.
	network *netAsk
	// lifecycle serializes pause, resume and fork of the sandbox, so
	// that of two pauses one finds it paused.
	lifecycle sync.Mutex

	opening sync.Mutex // held while a context's session opens

	mu       sync.Mutex
	timeout  time.Duration
	contexts []codeContext     // in creation order; contexts[0] is the main one
	defaults map[string]string // E2B language → its default context's id
}

// codeContext is one code-interpreter context: a Paddock session.
type codeContext struct {
	ID       string `json:"id"`
	Language string `json:"language"`
	Cwd      string `json:"cwd"`
}

// newToken returns 256 random bits in hex.
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tokenMatches compares a presented token with the expected one in
// constant time.
func tokenMatches(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// contextList is the sandbox's contexts, main first.
func (sb *sandbox) contextList() []codeContext {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return append([]codeContext(nil), sb.contexts...)
}

// sessionIDs is every context's session id, main last.
func (sb *sandbox) sessionIDs() []string {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	ids := make([]string, 0, len(sb.contexts))
	for i := len(sb.contexts) - 1; i >= 0; i-- {
		ids = append(ids, sb.contexts[i].ID)
	}
	return ids
}

// registry holds the live E2B sandboxes of every tenant.
type registry struct {
	mu   sync.Mutex
	byID map[string]*sandbox
}

func (r *registry) add(sb *sandbox) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[sb.id] = sb
}

// get finds id; callers check the owner or the token.
func (r *registry) get(id string) (*sandbox, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, ok := r.byID[id]
	return sb, ok
}

// take removes id and reports whether it was there, so that one of two
// concurrent kills does the closing.
func (r *registry) take(id string) (*sandbox, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, ok := r.byID[id]
	delete(r.byID, id)
	return sb, ok
}

func (r *registry) all() []*sandbox {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*sandbox, 0, len(r.byID))
	for _, sb := range r.byID {
		out = append(out, sb)
	}
	return out
}

// closeAll ends every session of sb, main last; sessions already gone
// are fine.
func (d *door) closeAll(ctx context.Context, sb *sandbox) error {
	var errs []error
	for _, id := range sb.sessionIDs() {
		err := d.core.CloseSession(ctx, sb.owner, id)
		if err != nil && classify(err).Kind != core.KindNotFound {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// alive reports whether sb's main session still exists; a sandbox whose
// main session ended (its TTL, or closed through /v1) is dropped, and its
// other contexts closed.
func (d *door) alive(ctx context.Context, sb *sandbox) (core.Session, bool) {
	s, err := d.core.Session(sb.owner, sb.id)
	if err == nil {
		return s, true
	}
	if classify(err).Kind == core.KindNotFound {
		if _, ok := d.reg.take(sb.id); ok {
			if err := d.closeAll(context.WithoutCancel(ctx), sb); err != nil {
				d.log.Warn("closing the contexts of an ended E2B sandbox", keySandboxID, sb.id, "err", err)
			}
		}
	}
	return core.Session{}, false
}

// prune drops every sandbox whose main session has ended.
func (d *door) prune(ctx context.Context) {
	for _, sb := range d.reg.all() {
		d.alive(ctx, sb)
	}
}

// owned finds the caller's live sandbox id. The core decides whether the
// caller may reach it (its tenant, its scopes) by looking up the main
// session as the caller; another tenant's sandbox, an unknown one and an
// ended one are the same not-found answer.
func (d *door) owned(ctx context.Context, c core.Caller, id string) (*sandbox, core.Session, error) {
	sb, ok := d.reg.get(id)
	if !ok {
		return nil, core.Session{}, sandboxNotFound(id)
	}
	s, err := d.core.Session(c, id)
	if err != nil {
		if classify(err).Kind != core.KindNotFound {
			return nil, core.Session{}, err
		}
		d.alive(ctx, sb) // drops it if its session ended
		return nil, core.Session{}, sandboxNotFound(id)
	}
	return sb, s, nil
}

// touch gives every context of sb but the one just used (which the core
// refreshed) the sandbox's timeout from now, so that a sandbox in use
// keeps all its contexts.
func (d *door) touch(sb *sandbox, used string) {
	sb.mu.Lock()
	ttl := sb.timeout
	sb.mu.Unlock()
	for _, id := range sb.sessionIDs() {
		if id != used {
			_, _ = d.core.SetSessionTTL(sb.owner, id, ttl)
		}
	}
}

package e2bdoor

import (
	"context"
	"maps"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// forkRequest is the body of POST /sandboxes/{id}/fork.
type forkRequest struct {
	Count   *int   `json:"count"`
	Timeout *int64 `json:"timeout"`
}

// forkResult is one entry of the fork answer: the new sandbox, or the
// error that kept it from starting. Paddock's forks succeed or fail
// together, so every entry of a 201 carries a sandbox.
type forkResult struct {
	Sandbox *sandboxAnswer `json:"sandbox,omitempty"`
	Error   *apiError      `json:"error,omitempty"`
}

// fork is Sandbox.fork({count, timeoutMs}): count new sandboxes (1 by
// default) from the exact state of the sandbox's main context, each with
// its template, metadata, env and lifecycle, and the given timeout or the
// sandbox's own: 201 with one result per fork. Extra code contexts are
// not forked. A fork that fails fails the request (no sandbox is left).
func (d *door) fork(c *gin.Context) {
	var req forkRequest
	if err := d.readJSON(c, &req); err != nil {
		fail(c, err)
		return
	}
	count := 1
	if req.Count != nil {
		count = *req.Count
	}
	var ttl time.Duration
	if req.Timeout != nil {
		var err error
		if ttl, err = timeoutOf(*req.Timeout); err != nil {
			fail(c, err)
			return
		}
	}
	ctx := c.Request.Context()
	sb, _, err := d.owned(ctx, callerOf(c), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	sb.lifecycle.Lock()
	children, err := d.core.ForkSession(ctx, sb.owner, sb.id, count)
	sb.lifecycle.Unlock()
	if err != nil {
		fail(c, err)
		return
	}
	sb.mu.Lock()
	if ttl == 0 {
		ttl = sb.timeout
	}
	lang := sb.language
	sb.mu.Unlock()
	out := make([]forkResult, 0, len(children))
	made := make([]*sandbox, 0, len(children))
	for _, s := range children {
		child := &sandbox{
			id:           s.ID,
			owner:        sb.owner,
			template:     sb.template,
			alias:        sb.alias,
			language:     lang,
			metadata:     maps.Clone(sb.metadata),
			env:          maps.Clone(sb.env),
			started:      s.CreatedAt,
			cpus:         sb.cpus,
			memoryMB:     sb.memoryMB,
			diskMB:       sb.diskMB,
			envdToken:    newToken(),
			trafficToken: newToken(),
			autoPause:    sb.autoPause,
			autoResume:   sb.autoResume,
			network:      sb.network,
			timeout:      s.TTL,
			contexts:     []codeContext{{ID: s.ID, Language: lang, Cwd: homeDir}},
			defaults:     map[string]string{lang: s.ID},
		}
		d.reg.add(child)
		d.keep(child)
		made = append(made, child)
		if ttl != s.TTL {
			if err := d.retime(child, ttl); err != nil {
				d.dropForks(c, made, children)
				fail(c, err)
				return
			}
		}
		a := answerOf(child)
		out = append(out, forkResult{Sandbox: &a})
	}
	c.JSON(http.StatusCreated, out)
}

// dropForks undoes a fork whose timeout could not be set: every child
// sandbox made is closed, and the children's sessions not yet made.
func (d *door) dropForks(c *gin.Context, made []*sandbox, children []core.Session) {
	ctx := context.WithoutCancel(c.Request.Context())
	for _, sb := range made {
		d.reg.take(sb.id)
	}
	for _, s := range children {
		err := d.core.CloseSession(ctx, made[0].owner, s.ID)
		if err != nil && classify(err).Kind != core.KindNotFound {
			d.log.Warn("closing a fork of an E2B sandbox failed", keySandboxID, s.ID, "err", err)
		}
	}
}

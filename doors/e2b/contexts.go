package e2bdoor

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// homeDir is E2B's working directory; Paddock maps it to /workspace.
const homeDir = "/home/user"

// maxContexts bounds one sandbox's contexts (each is a session, counted
// by the core against the tenant's limit as well).
const maxContexts = 16

// templateOfLanguage maps an E2B context language to the Paddock
// template that serves it and the language's canonical E2B name.
func templateOfLanguage(lang string) (template, canonical string, err error) {
	switch strings.ToLower(lang) {
	case "python", "python3":
		return "python", "python", nil
	case "js", "javascript", "node", "nodejs":
		return "node", "javascript", nil
	}
	return "", "", invalid(fmt.Sprintf("language %q is not served: Paddock runs python and javascript contexts", lang))
}

// e2bLanguage names a Paddock template language as E2B does.
func e2bLanguage(paddock string) string {
	if paddock == "node" {
		return "javascript"
	}
	return paddock
}

// context finds the context id of sb.
func (sb *sandbox) context(id string) (codeContext, bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	i := slices.IndexFunc(sb.contexts, func(cc codeContext) bool { return cc.ID == id })
	if i < 0 {
		return codeContext{}, false
	}
	return sb.contexts[i], true
}

// openContext opens a new context of lang in sb: a session of the owner
// with the sandbox's timeout and environment.
func (d *door) openContext(c *gin.Context, sb *sandbox, lang string) (codeContext, error) {
	tmpl, canonical, err := templateOfLanguage(lang)
	if err != nil {
		return codeContext{}, err
	}
	sb.mu.Lock()
	n, ttl := len(sb.contexts), sb.timeout
	sb.mu.Unlock()
	if n >= maxContexts {
		return codeContext{}, &core.Error{Kind: core.KindTooMany, Code: "too_many_contexts",
			Message: fmt.Sprintf("a sandbox has at most %d contexts: delete one first", maxContexts)}
	}
	s, err := d.core.CreateSession(c.Request.Context(), sb.owner, core.SessionInput{Language: tmpl, TTL: ttl, Env: sb.env,
		HibernateAtExpiry: sb.autoPause, Network: sb.network.core()})
	if err != nil {
		return codeContext{}, err
	}
	cc := codeContext{ID: s.ID, Language: canonical, Cwd: homeDir}
	sb.mu.Lock()
	sb.contexts = append(sb.contexts, cc)
	sb.mu.Unlock()
	// A kill that took sb while the session opened may have listed its
	// contexts before this one: close it here. (A kill after this check
	// lists it.)
	if live, ok := d.reg.get(sb.id); !ok || live != sb {
		err := d.core.CloseSession(context.WithoutCancel(c.Request.Context()), sb.owner, s.ID)
		if err != nil && classify(err).Kind != core.KindNotFound {
			d.log.Warn("closing a context opened as its sandbox was killed", keySandboxID, sb.id, "err", err)
		}
		return codeContext{}, sandboxNotFound(sb.id)
	}
	d.keep(sb)
	return cc, nil
}

// defaultContext is sb's context for lang, opened on first use.
func (d *door) defaultContext(c *gin.Context, sb *sandbox, lang string) (codeContext, error) {
	_, canonical, err := templateOfLanguage(lang)
	if err != nil {
		return codeContext{}, err
	}
	sb.opening.Lock()
	defer sb.opening.Unlock()
	sb.mu.Lock()
	id, ok := sb.defaults[canonical]
	sb.mu.Unlock()
	if ok {
		if cc, ok := sb.context(id); ok {
			return cc, nil
		}
	}
	cc, err := d.openContext(c, sb, canonical)
	if err != nil {
		return codeContext{}, err
	}
	sb.mu.Lock()
	sb.defaults[canonical] = cc.ID
	sb.mu.Unlock()
	d.keep(sb)
	return cc, nil
}

type contextRequest struct {
	Language string `json:"language"`
	Cwd      string `json:"cwd"`
}

func (d *door) createContext(c *gin.Context) {
	var req contextRequest
	if err := d.readJSON(c, &req); err != nil {
		fail(c, err)
		return
	}
	if req.Cwd != "" && req.Cwd != homeDir && req.Cwd != homeDir+"/" {
		fail(c, invalid("cwd: a context runs in "+homeDir+" (the session's /workspace); no other directory is served"))
		return
	}
	if req.Language == "" {
		req.Language = "python"
	}
	sb := sandboxOf(c)
	sb.opening.Lock()
	cc, err := d.openContext(c, sb, req.Language)
	sb.opening.Unlock()
	if err != nil {
		fail(c, err)
		return
	}
	d.touch(sb, cc.ID)
	c.JSON(http.StatusOK, cc)
}

func (d *door) listContexts(c *gin.Context) {
	c.JSON(http.StatusOK, sandboxOf(c).contextList())
}

// deleteContext closes a context's session. The main context is the
// sandbox itself: kill the sandbox instead.
func (d *door) deleteContext(c *gin.Context) {
	sb, id := sandboxOf(c), c.Param("ctx")
	if id == sb.id {
		fail(c, invalid("context "+id+" is the sandbox's main context: kill the sandbox to end it"))
		return
	}
	sb.mu.Lock()
	i := slices.IndexFunc(sb.contexts, func(cc codeContext) bool { return cc.ID == id })
	if i >= 0 {
		sb.contexts = slices.Delete(sb.contexts, i, i+1)
		for lang, def := range sb.defaults {
			if def == id {
				delete(sb.defaults, lang)
			}
		}
	}
	sb.mu.Unlock()
	if i < 0 {
		fail(c, notFound("context "+id+" not found"))
		return
	}
	d.keep(sb)
	if err := d.core.CloseSession(c.Request.Context(), sb.owner, id); err != nil && classify(err).Kind != core.KindNotFound {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// restartContext replaces the context's interpreter: its state is gone.
func (d *door) restartContext(c *gin.Context) {
	sb, id := sandboxOf(c), c.Param("ctx")
	if _, ok := sb.context(id); !ok {
		fail(c, notFound("context "+id+" not found"))
		return
	}
	if _, err := d.core.Restart(c.Request.Context(), sb.owner, id); err != nil {
		fail(c, err)
		return
	}
	d.touch(sb, id)
	c.Status(http.StatusNoContent)
}

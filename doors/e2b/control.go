package e2bdoor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// Limits on a create request's metadata, which only the door keeps (the
// envVars are the session's env: the core checks them).
const (
	maxMetadata    = 64
	maxKeyBytes    = 256
	maxValueBytes  = 4096
	maxTimeoutSecs = 1 << 31 / 1000 // far past any server's session TTL; the core checks the real bound
)

// templateAliases are the E2B template names that mean Paddock's python
// template: the code interpreter's default and E2B's base image.
var templateAliases = map[string]string{
	"":                    "python",
	"base":                "python",
	"code-interpreter":    "python",
	"code-interpreter-v1": "python",
}

// templateFor resolves an E2B template ID: one of templateAliases or a
// language, which get the language's session template (python, pandas
// loaded ahead), else a Paddock template's own name (python-slim). An ID
// that is none of these is refused with the language's error.
func (d *door) templateFor(id string) (core.TemplateInfo, error) {
	if lang, ok := templateAliases[id]; ok {
		return d.core.Template(lang)
	}
	t, err := d.core.Template(id)
	if err == nil {
		return t, nil
	}
	if named, nerr := d.core.TemplateOf("", id); nerr == nil {
		return named, nil
	}
	return t, err
}

// createRequest is the body of POST /sandboxes and /v2/sandboxes. Fields
// the SDK may send that Paddock cannot honour are read to refuse them.
type createRequest struct {
	TemplateID          string            `json:"templateID"`
	Timeout             *int64            `json:"timeout"`
	Metadata            map[string]string `json:"metadata"`
	EnvVars             map[string]string `json:"envVars"`
	AllowInternetAccess *bool             `json:"allow_internet_access"`
	AutoPause           *bool             `json:"autoPause"`
	AutoPauseMemory     *bool             `json:"autoPauseMemory"`
	AutoResume          *autoResumeConfig `json:"autoResume"`
	MCP                 json.RawMessage   `json:"mcp"`
	Network             json.RawMessage   `json:"network"`
	VolumeMounts        json.RawMessage   `json:"volumeMounts"`
}

// autoResumeConfig is the create body's autoResume: the SDK sends
// {"enabled": bool} when lifecycle.autoResume is set.
type autoResumeConfig struct {
	Enabled bool `json:"enabled"`
}

// sandboxAnswer is the create and connect answer.
type sandboxAnswer struct {
	SandboxID          string  `json:"sandboxID"`
	TemplateID         string  `json:"templateID"`
	Alias              string  `json:"alias"`
	ClientID           string  `json:"clientID"`
	EnvdVersion        string  `json:"envdVersion"`
	EnvdAccessToken    string  `json:"envdAccessToken"`
	TrafficAccessToken string  `json:"trafficAccessToken"`
	Domain             *string `json:"domain"`
}

// sandboxDetail is the get and list answer of one sandbox.
type sandboxDetail struct {
	SandboxID   string            `json:"sandboxID"`
	TemplateID  string            `json:"templateID"`
	Alias       string            `json:"alias"`
	ClientID    string            `json:"clientID"`
	StartedAt   time.Time         `json:"startedAt"`
	EndAt       time.Time         `json:"endAt"`
	State       string            `json:"state"`
	CPUCount    int               `json:"cpuCount"`
	MemoryMB    int               `json:"memoryMB"`
	DiskSizeMB  int               `json:"diskSizeMB"`
	EnvdVersion string            `json:"envdVersion"`
	Metadata    map[string]string `json:"metadata"`
	Domain      *string           `json:"domain"`
	Lifecycle   lifecycle         `json:"lifecycle"`
	// AllowInternetAccess and Network say what the sandbox may reach
	// (network.go).
	AllowInternetAccess bool         `json:"allowInternetAccess"`
	Network             *networkInfo `json:"network,omitempty"`
}

// lifecycle is what the sandbox does at its timeout ("kill" or "pause")
// and whether a call on it paused wakes it.
type lifecycle struct {
	OnTimeout  string `json:"onTimeout"`
	AutoResume bool   `json:"autoResume"`
}

const clientID = "paddock"

func (d *door) create(c *gin.Context) {
	var req createRequest
	if err := d.readJSON(c, &req); err != nil {
		fail(c, err)
		return
	}
	ttl, err := checkCreate(&req)
	if err != nil {
		fail(c, err)
		return
	}
	t, err := d.templateFor(req.TemplateID)
	if err != nil {
		fail(c, err)
		return
	}
	caller := callerOf(c)
	d.prune(c.Request.Context())
	autoPause := req.AutoPause != nil && *req.AutoPause
	ask, err := networkAsk(req.AllowInternetAccess, req.Network)
	if err != nil {
		fail(c, err)
		return
	}
	s, err := d.core.CreateSession(c.Request.Context(), caller, core.SessionInput{Language: t.Language, Template: t.Name,
		TTL: ttl, Env: req.EnvVars, HibernateAtExpiry: autoPause, Network: ask.core()})
	if err != nil {
		fail(c, err)
		return
	}
	lang := e2bLanguage(t.Language)
	sb := &sandbox{
		id:           s.ID,
		owner:        caller,
		template:     req.TemplateID,
		alias:        t.Name,
		language:     lang,
		metadata:     req.Metadata,
		env:          req.EnvVars,
		started:      s.CreatedAt,
		cpus:         max(1, int(t.Limits.CPUs+0.999)),
		memoryMB:     t.Limits.MemoryMB,
		diskMB:       t.Limits.DiskMB,
		envdToken:    newToken(),
		trafficToken: newToken(),
		autoPause:    autoPause,
		autoResume:   req.AutoResume != nil && req.AutoResume.Enabled,
		network:      ask,
		timeout:      ttl,
		contexts:     []codeContext{{ID: s.ID, Language: lang, Cwd: homeDir}},
		defaults:     map[string]string{lang: s.ID},
	}
	if sb.template == "" {
		sb.template = "code-interpreter-v1"
	}
	d.reg.add(sb)
	d.keep(sb)
	c.JSON(http.StatusCreated, answerOf(sb))
}

// checkCreate refuses what Paddock cannot do and bounds the metadata; it
// returns the timeout as a TTL (the core checks its range, and envVars).
func checkCreate(req *createRequest) (time.Duration, error) {
	switch {
	case req.AutoPauseMemory != nil && !*req.AutoPauseMemory:
		return 0, invalid("autoPauseMemory: false (onTimeout keepMemory false) is not served: Paddock pauses a sandbox with its memory")
	case len(req.MCP) > 0 && string(req.MCP) != "null":
		return 0, invalid("mcp: Paddock sandboxes run no MCP gateway")
	case len(req.VolumeMounts) > 0 && string(req.VolumeMounts) != "null":
		return 0, invalid("volumeMounts: Paddock has no volumes")
	}
	if err := checkMap("metadata", req.Metadata, maxMetadata); err != nil {
		return 0, err
	}
	if req.Timeout == nil {
		return DefaultTimeout, nil
	}
	return timeoutOf(*req.Timeout)
}

func timeoutOf(secs int64) (time.Duration, error) {
	if secs < 1 || secs > maxTimeoutSecs {
		return 0, invalid(fmt.Sprintf("timeout must be between 1 and %d seconds, got %d", maxTimeoutSecs, secs))
	}
	return time.Duration(secs) * time.Second, nil
}

func checkMap(field string, m map[string]string, most int) error {
	if len(m) > most {
		return invalid(fmt.Sprintf("%s: at most %d entries, got %d", field, most, len(m)))
	}
	for k, v := range m {
		if k == "" || len(k) > maxKeyBytes || len(v) > maxValueBytes {
			return invalid(fmt.Sprintf("%s: keys are 1 to %d bytes and values at most %d bytes", field, maxKeyBytes, maxValueBytes))
		}
	}
	return nil
}

func answerOf(sb *sandbox) sandboxAnswer {
	return sandboxAnswer{
		SandboxID:          sb.id,
		TemplateID:         sb.template,
		Alias:              sb.alias,
		ClientID:           clientID,
		EnvdVersion:        EnvdVersion,
		EnvdAccessToken:    sb.envdToken,
		TrafficAccessToken: sb.trafficToken,
	}
}

func detailOf(sb *sandbox, s core.Session) sandboxDetail {
	md := sb.metadata
	if md == nil {
		md = map[string]string{}
	}
	internet, network := infoOf(sb.network)
	return sandboxDetail{
		AllowInternetAccess: internet,
		Network:             network,
		SandboxID:           sb.id,
		TemplateID:          sb.template,
		Alias:               sb.alias,
		ClientID:            clientID,
		StartedAt:           sb.started.UTC(),
		EndAt:               s.ExpiresAt.UTC(),
		State:               stateOf(s),
		CPUCount:            sb.cpus,
		MemoryMB:            sb.memoryMB,
		DiskSizeMB:          sb.diskMB,
		EnvdVersion:         EnvdVersion,
		Metadata:            md,
		Lifecycle:           lifecycle{OnTimeout: onTimeout(sb.autoPause), AutoResume: sb.autoResume},
	}
}

func onTimeout(pause bool) string {
	if pause {
		return "pause"
	}
	return "kill"
}

func (d *door) get(c *gin.Context) {
	sb, s, err := d.owned(c.Request.Context(), callerOf(c), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, detailOf(sb, s))
}

// kill closes every session of the sandbox: 204, or 404 when it is not
// the caller's live sandbox.
func (d *door) kill(c *gin.Context) {
	id := c.Param("id")
	sb, _, err := d.owned(c.Request.Context(), callerOf(c), id)
	if err != nil {
		fail(c, err)
		return
	}
	if _, ok := d.reg.take(id); !ok {
		fail(c, sandboxNotFound(id))
		return
	}
	if err := d.closeAll(c.Request.Context(), sb); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

type timeoutRequest struct {
	Timeout *int64 `json:"timeout"`
}

// setTimeout gives every context of the sandbox the new timeout, counted
// from now: 204.
func (d *door) setTimeout(c *gin.Context) {
	var req timeoutRequest
	if err := d.readJSON(c, &req); err != nil {
		fail(c, err)
		return
	}
	if req.Timeout == nil {
		fail(c, invalid("timeout (seconds) is required"))
		return
	}
	ttl, err := timeoutOf(*req.Timeout)
	if err != nil {
		fail(c, err)
		return
	}
	sb, _, err := d.owned(c.Request.Context(), callerOf(c), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	if err := d.retime(sb, ttl); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// retime sets the TTL of every context of sb, the main one first (whose
// refusal, say past the server's maximum, changes nothing).
func (d *door) retime(sb *sandbox, ttl time.Duration) error {
	if _, err := d.core.SetSessionTTL(sb.owner, sb.id, ttl); err != nil {
		return err
	}
	sb.mu.Lock()
	sb.timeout = ttl
	sb.mu.Unlock()
	d.keep(sb)
	d.touch(sb, sb.id)
	return nil
}

// readJSON decodes a bounded JSON body into v; an empty body is {}.
func (d *door) readJSON(c *gin.Context, v any) error {
	body := http.MaxBytesReader(c.Writer, c.Request.Body, d.cfg.MaxBodyBytes)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &core.Error{Kind: core.KindTooLarge, Code: "too_large", Message: fmt.Sprintf("request body over %d bytes", mbe.Limit)}
		}
		return invalid("request body is not valid JSON: " + err.Error())
	}
	return nil
}

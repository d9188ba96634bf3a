package e2bdoor

import (
	"encoding/json"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
)

// A sandbox's bookkeeping outlives the server: the door leaves it as a
// note on the sandbox's main session (core.SetSessionNote), which the core
// keeps with the session across restarts, and rebuilds its registry from
// the notes when it starts. The sandbox's contexts are sessions of their
// own, which survive the same way.

// sandboxNote is what a note keeps of a sandbox.
type sandboxNote struct {
	Tenant       string            `json:"tenant"`
	Scopes       []string          `json:"scopes,omitempty"`
	Template     string            `json:"template"`
	Alias        string            `json:"alias"`
	Language     string            `json:"language"`
	Metadata     map[string]string `json:"metadata,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Started      time.Time         `json:"started"`
	CPUs         int               `json:"cpus"`
	MemoryMB     int               `json:"memory_mb"`
	DiskMB       int               `json:"disk_mb"`
	EnvdToken    string            `json:"envd_token"`
	TrafficToken string            `json:"traffic_token"`
	AutoPause    bool              `json:"auto_pause,omitempty"`
	AutoResume   bool              `json:"auto_resume,omitempty"`
	Timeout      time.Duration     `json:"timeout"`
	Contexts     []codeContext     `json:"contexts"`
	Defaults     map[string]string `json:"defaults"`
	Network      *netAsk           `json:"network,omitempty"`
}

// keep writes sb's note; a failure is logged (the sandbox goes on, but a
// restart would not know it through this door).
func (d *door) keep(sb *sandbox) {
	sb.mu.Lock()
	n := sandboxNote{Tenant: sb.owner.Tenant, Scopes: sb.owner.Scopes, Template: sb.template, Alias: sb.alias,
		Language: sb.language, Metadata: sb.metadata, Env: sb.env, Started: sb.started, CPUs: sb.cpus,
		MemoryMB: sb.memoryMB, DiskMB: sb.diskMB, EnvdToken: sb.envdToken, TrafficToken: sb.trafficToken,
		AutoPause: sb.autoPause, AutoResume: sb.autoResume, Timeout: sb.timeout, Network: sb.network,
		Contexts: append([]codeContext(nil), sb.contexts...), Defaults: make(map[string]string, len(sb.defaults))}
	for k, v := range sb.defaults {
		n.Defaults[k] = v
	}
	sb.mu.Unlock()
	doc, err := json.Marshal(n)
	if err == nil {
		err = d.core.SetSessionNote(sb.owner, sb.id, doc)
	}
	if err != nil {
		d.log.Warn("keeping a sandbox's bookkeeping failed: a restart will not know it as an E2B sandbox", keySandboxID, sb.id, "err", err)
	}
}

// rebuild registers the sandboxes whose notes the core kept from an
// earlier server.
func (d *door) rebuild() {
	n := 0
	for _, note := range d.core.SessionNotes(edge.E2B) {
		var sn sandboxNote
		if err := json.Unmarshal(note.Doc, &sn); err != nil || sn.Tenant != note.Owner || len(sn.Contexts) == 0 ||
			sn.Contexts[0].ID != note.SessionID || sn.EnvdToken == "" || sn.TrafficToken == "" {
			d.log.Warn("ignoring an unreadable sandbox note", keySandboxID, note.SessionID, "err", err)
			continue
		}
		if sn.Defaults == nil {
			sn.Defaults = map[string]string{}
		}
		d.reg.add(&sandbox{id: note.SessionID, owner: core.Caller{Tenant: sn.Tenant, Scopes: sn.Scopes, Door: edge.E2B},
			template: sn.Template, alias: sn.Alias, language: sn.Language, metadata: sn.Metadata, env: sn.Env,
			started: sn.Started, cpus: sn.CPUs, memoryMB: sn.MemoryMB, diskMB: sn.DiskMB,
			envdToken: sn.EnvdToken, trafficToken: sn.TrafficToken, autoPause: sn.AutoPause, autoResume: sn.AutoResume, network: sn.Network,
			timeout: sn.Timeout, contexts: sn.Contexts, defaults: sn.Defaults})
		n++
	}
	if n > 0 {
		d.log.Info("took over the E2B sandboxes an earlier server left", "count", n)
	}
}

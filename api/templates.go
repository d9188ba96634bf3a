package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/pool"
)

// Template describes one sandbox template to clients.
type Template struct {
	Name        string            `json:"name"`
	Language    string            `json:"language"`
	Description string            `json:"description"`
	Versions    map[string]string `json:"versions"`
	Limits      Limits            `json:"limits"`
	// SnapshotNote says why the template is never snapshotted, if so.
	SnapshotNote string `json:"snapshot_note,omitempty"`
	// Runtime names what isolates its sandboxes: "runsc" (gVisor) or
	// "runc" (plain containers); RuntimeNote says what that means.
	Runtime     string `json:"runtime,omitempty"`
	RuntimeNote string `json:"runtime_note,omitempty"`
}

// Limits are a template's resource limits as clients see them.
type Limits struct {
	MemoryMB  int     `json:"memory_mb"`
	Processes int     `json:"processes"`
	CPUs      float64 `json:"cpus"`
	DiskMB    int     `json:"disk_mb"`
	OpenFiles int     `json:"open_files"`
	TimeoutMS int     `json:"timeout_ms"`
}

type templatesBody struct {
	Templates []templateInfo `json:"templates"`
	// MinLimits and MaxLimits bound what a run request may ask for.
	MinLimits Limits `json:"min_limits"`
	MaxLimits Limits `json:"max_limits"`
}

type templateInfo struct {
	Template
	Pool poolInfo `json:"pool"`
}

type poolInfo struct {
	Target   int  `json:"target"`
	Floor    int  `json:"floor"`
	Ceiling  int  `json:"ceiling"`
	Ready    int  `json:"ready"`
	InUse    int  `json:"in_use"`
	Starting int  `json:"starting"`
	Healthy  bool `json:"healthy"`
	// Snapshot is off, building, ready or failed.
	Snapshot        string `json:"snapshot"`
	Hits            uint64 `json:"hits"`
	Misses          uint64 `json:"misses"`
	Restores        uint64 `json:"restores"`
	ColdStarts      uint64 `json:"cold_starts"`
	RestoreFailures uint64 `json:"restore_failures"`
}

// templates lists the configured templates with their pool state.
func (s *server) templates(c *gin.Context) {
	stats := make(map[string]pool.Stats)
	for _, st := range s.pool.Stats() {
		stats[st.Template] = st
	}
	body := templatesBody{Templates: make([]templateInfo, 0, len(s.cfg.Templates))}
	body.MinLimits, body.MaxLimits = s.requestLimits()
	for _, t := range s.cfg.Templates {
		if t.Versions == nil {
			t.Versions = map[string]string{}
		}
		st := stats[t.Name]
		body.Templates = append(body.Templates, templateInfo{
			Template: t,
			Pool: poolInfo{
				Target: st.Target, Floor: st.Floor, Ceiling: st.Ceiling,
				Ready: st.Ready, InUse: st.InUse, Starting: st.Starting, Healthy: st.Healthy,
				Snapshot: st.Snapshot, Hits: st.Hits, Misses: st.Misses,
				Restores: st.Restores, ColdStarts: st.ColdStarts, RestoreFailures: st.RestoreFailures,
			},
		})
	}
	writeJSON(c, http.StatusOK, body)
}

package core

import (
	"maps"
	"sync"

	"github.com/paddock-dev/paddock/pool"
)

// Template describes one sandbox template to clients.
type Template struct {
	Name        string            `json:"name"`
	Language    string            `json:"language"`
	Description string            `json:"description"`
	Versions    map[string]string `json:"versions"`
	Limits      TemplateLimits    `json:"limits"`
	// WarmImports are the top-level Python modules this template's
	// warm-up has loaded: a run naming no template whose code imports one
	// of them goes here.
	WarmImports []string `json:"warm_imports,omitempty"`
	// DefaultFor says what this template serves when a request names only
	// its language: "runs" (those importing no other template's warm
	// import), "sessions", or both. With no claim, the template named as
	// the language serves, else the first of that language.
	DefaultFor []string `json:"default_for,omitempty"`
	// SnapshotNote says why the template is never snapshotted, if so.
	SnapshotNote string `json:"snapshot_note,omitempty"`
	// Runtime names what isolates its sandboxes: "runsc" (gVisor) or
	// "runc" (plain containers); RuntimeNote says what that means.
	Runtime     string `json:"runtime,omitempty"`
	RuntimeNote string `json:"runtime_note,omitempty"`
	// Egress is the template's own egress allowance, rules as
	// --egress-allow takes them; the server's narrows it (allowance.go).
	// Nil: the server's alone. Listed as TemplateInfo.Network.
	Egress []string `json:"-"`
}

// TemplateLimits are a template's resource limits as clients see them,
// and the bounds of what a request may ask for (RequestLimits).
type TemplateLimits struct {
	MemoryMB  int     `json:"memory_mb"`
	Processes int     `json:"processes"`
	CPUs      float64 `json:"cpus"`
	DiskMB    int     `json:"disk_mb"`
	OpenFiles int     `json:"open_files"`
	TimeoutMS int     `json:"timeout_ms"`
}

// TemplateInfo is a template with the state of its pool.
type TemplateInfo struct {
	Template
	// Network is the most a run of the template may reach: the server's
	// egress allowance with its denylist (mode none when it gives runs no
	// network). A run's own request narrows it, never widens it.
	Network NetworkPolicy `json:"network"`
	Pool    PoolInfo      `json:"pool"`
}

// PoolInfo is a template's pool as clients see it.
type PoolInfo struct {
	Target   int  `json:"target"`
	Floor    int  `json:"floor"`
	Ceiling  int  `json:"ceiling"`
	Ready    int  `json:"ready"`
	InUse    int  `json:"in_use"`
	Starting int  `json:"starting"`
	Waiting  int  `json:"waiting"`
	Healthy  bool `json:"healthy"`
	// Image is the template's root filesystem: ready, or on a server that
	// takes requests while it builds them, building or failed (until
	// then its requests are refused: template_building,
	// template_unavailable).
	Image string `json:"image"`
	// Snapshot is off, building, ready or failed.
	Snapshot        string `json:"snapshot"`
	Hits            uint64 `json:"hits"`
	Misses          uint64 `json:"misses"`
	Restores        uint64 `json:"restores"`
	ColdStarts      uint64 `json:"cold_starts"`
	RestoreFailures uint64 `json:"restore_failures"`
	// Kernel-ready sandboxes kept for sessions apart from the ready ones:
	// how many are kept, ready and being made, and the sessions that took
	// one (KernelHits) or found none (KernelMisses).
	Kernels         int    `json:"kernels"`
	KernelsReady    int    `json:"kernels_ready"`
	KernelsStarting int    `json:"kernels_starting"`
	KernelHits      uint64 `json:"kernel_hits"`
	KernelMisses    uint64 `json:"kernel_misses"`
}

// Templates describes the configured templates with their pool state, in
// the configured order.
func (s *Service) Templates() []TemplateInfo {
	stats := make(map[string]pool.Stats)
	for _, st := range s.pool.Stats() {
		stats[st.Template] = st
	}
	out := make([]TemplateInfo, 0, len(s.cfg.Templates))
	for _, t := range s.cfg.Templates {
		if v, ok := s.versions.get(t.Name); ok {
			t.Versions = v
		}
		if t.Versions == nil {
			t.Versions = map[string]string{}
		}
		st := stats[t.Name]
		out = append(out, TemplateInfo{
			Template: t,
			Network:  s.templateAllowance(t.Name),
			Pool: PoolInfo{
				Target: st.Target, Floor: st.Floor, Ceiling: st.Ceiling,
				Ready: st.Ready, InUse: st.InUse, Starting: st.Starting, Waiting: st.Waiting, Healthy: st.Healthy,
				Image: st.Image, Snapshot: st.Snapshot, Hits: st.Hits, Misses: st.Misses,
				Restores: st.Restores, ColdStarts: st.ColdStarts, RestoreFailures: st.RestoreFailures,
				Kernels: st.Kernels, KernelsReady: st.KernelsReady, KernelsStarting: st.KernelsStarting,
				KernelHits: st.KernelHits, KernelMisses: st.KernelMisses,
			},
		})
	}
	return out
}

// Template resolves a language ("python", "node") to the template its
// sessions get (see Config.Templates). A template's own name is not a
// language; "" and unknown languages are KindInvalid naming the choices.
func (s *Service) Template(language string) (TemplateInfo, error) {
	return s.TemplateOf(language, "")
}

// TemplateOf is the template a session asking for language and template
// gets: the named template, which must be of language when both are
// given, else language's session template. Errors are KindInvalid:
// unknown_template, template_language, unknown_language, invalid_request.
func (s *Service) TemplateOf(language, template string) (TemplateInfo, error) {
	tgt, err := s.resolve(language, template, false, "")
	if err != nil {
		return TemplateInfo{}, err
	}
	return s.info(tgt.template), nil
}

// info describes the configured template name with its pool state.
func (s *Service) info(name string) TemplateInfo {
	for _, t := range s.Templates() {
		if t.Name == name {
			return t
		}
	}
	return TemplateInfo{Template: Template{Name: name, Language: s.langOf[name]}}
}

// Languages are the languages this server runs, sorted.
func (s *Service) Languages() []string { return append([]string(nil), s.languages...) }

// RequestLimits are the least and the most a run or session may ask for,
// as GET /v1/templates shows them.
func (s *Service) RequestLimits() (lo, hi TemplateLimits) {
	c := s.cfg
	lo = TemplateLimits{MemoryMB: MinMemoryMB, Processes: MinProcesses, CPUs: MinCPUs, DiskMB: MinDiskMB, OpenFiles: MinOpenFiles, TimeoutMS: 1}
	hi = TemplateLimits{MemoryMB: c.MaxMemoryMB, Processes: c.MaxProcesses, CPUs: c.MaxCPUs, DiskMB: c.MaxDiskMB, OpenFiles: c.MaxOpenFiles,
		TimeoutMS: int(c.MaxTimeout.Milliseconds())}
	return lo, hi
}

// SetTemplateVersions gives the versions of a template whose root
// filesystem was built after New (Template.Versions was empty then): what
// the build's version commands reported.
func (s *Service) SetTemplateVersions(name string, versions map[string]string) {
	s.versions.set(name, versions)
}

// lateVersions are template versions learnt after New.
type lateVersions struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

func (l *lateVersions) set(name string, v map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]map[string]string{}
	}
	l.m[name] = maps.Clone(v)
}

func (l *lateVersions) get(name string) (map[string]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.m[name]
	return maps.Clone(v), ok
}

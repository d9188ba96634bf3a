package templates

import "time"

// Template is one sandbox flavour: a root filesystem, a language driver,
// warm-up code, limits and a pool size.
type Template struct {
	// Name identifies the template ("python", "node"). It is also the name
	// of its JSON file.
	Name string `json:"name"`
	// Language selects the in-sandbox driver: "python" or "node".
	Language string `json:"language"`
	// Description is one sentence for people choosing a template.
	Description string `json:"description"`
	// Suite is the Debian suite the root filesystem is built from.
	Suite string `json:"suite"`
	// Packages are the Debian packages installed on top of minbase.
	Packages []string `json:"packages"`
	// StubPackages are packages that some of Packages depend on but that
	// nothing needs at run time. An empty stand-in is installed in their
	// place. For example python3-scipy depends on python3-pythran, a
	// compiler that would bring g++ and Boost: about 550 MB.
	StubPackages []string `json:"stub_packages"`
	// VersionCommands map a component name to the argv that prints its
	// version inside the built root filesystem.
	VersionCommands map[string][]string `json:"version_commands"`
	// Warmup is code the pre-started interpreter runs before it waits for
	// a request. Empty means none.
	Warmup string `json:"warmup"`
	// WarmImports are the top-level modules that import at once in this
	// template's sandboxes because the warm-up loaded them (or all they
	// build on). A run that names no template goes to the template of its
	// language whose WarmImports hold a module its code imports.
	WarmImports []string `json:"warm_imports,omitempty"`
	// DefaultFor lists what this template serves when a request names
	// only its language: "runs" (one-shot runs that import none of
	// another template's WarmImports), "sessions", or both. At most one
	// template of a language may claim each; with none, the template
	// named as the language serves, else the first of that language.
	DefaultFor []string `json:"default_for,omitempty"`
	// Limits bound each sandbox of this template.
	Limits Limits `json:"limits"`
	// PoolSize is the floor of the template's pool: the ready sandboxes
	// kept however idle it is.
	PoolSize int `json:"pool_size"`
	// PoolMax is the ceiling the pool may grow to under demand.
	PoolMax int `json:"pool_max"`
	// Snapshot says whether sandboxes may be restored from a snapshot
	// taken after the warm-up. Clones of a snapshot share its memory, so
	// it must be false when the interpreter keeps random state that its
	// driver cannot reseed after a restore.
	Snapshot bool `json:"snapshot"`
	// StartupHeapsMB are the V8 heap ceilings, in MiB (node's
	// --max-old-space-size; 0 for V8's default), that a node template's
	// image carries startup snapshots for (startup.go). A snapshot only
	// loads in a node started with the V8 flags it was built with, so the
	// list names the ceiling of the template's own memory limit; a sandbox
	// with another starts without one.
	StartupHeapsMB []int `json:"startup_heaps_mb,omitempty"`
	// SnapshotNote says why a template is not snapshotted, for people
	// reading /v1/templates.
	SnapshotNote string `json:"snapshot_note,omitempty"`
	// Network is the template's own egress allowance: the most its runs
	// and sessions may reach, narrowed further by the server's
	// --egress-allow and --egress-deny (the server checks the rules). Nil:
	// the server's allowance alone. Not part of the root filesystem's key.
	Network *Network `json:"network,omitempty"`
}

// Limits bound one sandbox of a template.
type Limits struct {
	// MemoryMB caps the sandbox's memory, in MiB.
	MemoryMB int `json:"memory_mb"`
	// Processes caps the user's processes and threads.
	Processes int `json:"processes"`
	// CPUs caps CPU time as a number of cores.
	CPUs float64 `json:"cpus"`
	// DiskMB caps the writable layer above the root filesystem, /tmp and
	// /dev/shm, each, in MiB.
	DiskMB int `json:"disk_mb"`
	// OpenFiles caps open file descriptors per process.
	OpenFiles int `json:"open_files"`
	// TimeoutMS is the default wall-clock limit of one run.
	TimeoutMS int `json:"timeout_ms"`
}

// MemoryBytes is MemoryMB in bytes.
func (l Limits) MemoryBytes() int64 { return int64(l.MemoryMB) << 20 }

// DiskBytes is DiskMB in bytes.
func (l Limits) DiskBytes() int64 { return int64(l.DiskMB) << 20 }

// Timeout is TimeoutMS as a duration.
func (l Limits) Timeout() time.Duration { return time.Duration(l.TimeoutMS) * time.Millisecond }

// Network is a template's egress allowance.
type Network struct {
	// Allow are egress rules, as --egress-allow takes them; empty: no
	// network for this template.
	Allow []string `json:"allow"`
}

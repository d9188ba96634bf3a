package bench

import (
	"time"
)

// Options are the run's flags, parsed by main.
type Options struct {
	Paddock, Runsc, Agent, Cache string
	// Gofer runs every gVisor sandbox the bench makes through Paddock
	// (servers and the CPU phases' runtime) with a gofer process instead
	// of on EROFS images, for a before/after.
	Gofer bool
	// Snapshots is the servers' snapshot directory, private to the run,
	// so that its images are built by the binaries it measures; the first
	// server's image serves the rest.
	Snapshots string

	Pool                    int // pool floor and ceiling of the pooled servers
	WarmN, RestoreN, ColdN  int
	RawN, NativeN, SessionN int
	E2BN                    int
	MCPN                    int
	BusyN                   int
	BusyInterval            time.Duration
	Settle, MemSettle       time.Duration
	ThroughputDuration      time.Duration
	ThroughputConcurrency   int
	ThroughputLangs         []string
	MemCold                 bool
	Runc                    bool
	JSONOut, CSVOut, PNGOut string
	JupyterN                int    // Jupyter cell round trips per stack (0: none)
	Clients                 string // doors/clients, with its npm packages installed
	JupyterOnly             bool   // run only the Jupyter phase
	SlimOnly                bool   // run only the python-slim / python comparison
	SlimN                   int    // print(1) samples per template and mode of the python-slim / python comparison (0: none)
	NativeRSSN              int    // native interpreters whose idle RSS is read, per template (0: none)
	MemoryOnly              bool   // run only the memory phases

	// The steady-state phase (steady.go).
	Steady, SteadyOnly, SteadyRaw   bool
	SteadyEmpty                     bool
	SteadyDuration                  time.Duration
	SteadyClients                   []int
	SteadyTemplates                 []string
	SteadyTxt, SteadyCSV, SteadyPNG string

	// The CPU-per-phase measurement (cpuphases.go).
	CPUPhasesN int  // one-shots per template and variant in the CPU phases (0: none)
	CPUOnly    bool // run only the CPU phases
	CPULangs   []string
	CPURaw     bool
	CPUIdle    time.Duration

	// The session start phase (sessionstart.go).
	SessionStartN    int  // create → first result samples per language (0: none)
	SessionStartOnly bool // run only the session start phase

	// The session tail phase (internal/sessions): the cells idle and
	// loaded, and the one-shot rate beside a busy session and without.
	TailN       int           // cells per condition (0: skip the phase)
	TailClients []int         // one-shot client counts, each a loaded condition and a rate
	TailTurns   int           // one-shot windows per client count and condition (0: no rate part)
	TailWindow  time.Duration // how long each one-shot window runs (0: no rate part)
	TailRounds  int           // rounds, each binary once per round
	TailBefore  string        // a second paddock binary measured in alternation
	TailServe   []string      // more serve flags for its servers
	TailOnly    bool          // run only this phase

	// The history store's cost (history.go): two servers, the history
	// on and off, alternating.
	HistoryN        int           // warm print(1) samples per server (0: skip the phase)
	GraphQLN        int           // GraphQL queries timed per document-cache state in the history phase (0: none)
	HistoryClients  int           // closed-loop clients of the throughput part
	HistoryDuration time.Duration // closed-loop time per server (0: no throughput part)
	HistoryOnly     bool          // run only this phase

	// Session hibernation (internal/hibernate): pause and resume rounds
	// per template, cold session starts beside them, and the sessions
	// one machine holds live and hibernated.
	HibernateN        int  // rounds per template and condition (0: skip the phase)
	HibernateCold     int  // cold session starts per template, in turns with the rounds
	HibernateSessions int  // sessions opened at once for the capacity part (0: none)
	HibernateOnly     bool // run only this phase

	// Network on purpose (internal/egressbench): downloads from a
	// stand-in internet from the host and from networked sandboxes, and
	// networked one-shots' starts.
	EgressRounds int   // rounds of downloads, each path once a round (0: skip the phase)
	EgressStarts int   // print(1) samples per start mode (0: none)
	EgressBig    int64 // bytes of the large download
	EgressSmall  int64 // bytes of the small download
	EgressOnly   bool  // run only this phase

	// Scale-out (internal/gatewaybench): one gateway over local nodes
	// against one node alone, in turns.
	GatewayN        int           // cheap requests per path for the added latency (0: skip the phase)
	GatewayClients  []int         // client counts of the one-shot part
	GatewayDuration time.Duration // each one-shot window (0: no one-shot part)
	GatewayTurns    int           // windows per client count and path
	GatewayPool     int           // python pool per node, floor and ceiling
	GatewayOnly     bool          // run only this phase

	Flags map[string]any // every flag's value, for the JSON
}

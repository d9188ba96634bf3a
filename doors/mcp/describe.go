package mcpdoor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/paddock-dev/paddock/core"
)

// environment describes, for a model, where its code runs: each template
// with its versions and limits, the missing network and /workspace.
func environment(tmpls []core.TemplateInfo) string {
	var b strings.Builder
	b.WriteString("Code runs in an isolated gVisor sandbox with no network access: nothing can be downloaded or installed, " +
		"so use only what is listed here. Files live in /workspace (relative paths resolve there).")
	shown := map[string]string{} // versions → the template that listed them
	for _, t := range tmpls {
		fmt.Fprintf(&b, "\n- %s", t.Language)
		if t.Name != t.Language {
			fmt.Fprintf(&b, " (template %s)", t.Name)
		}
		v := versions(t.Versions)
		if other, ok := shown[v]; ok && v != "" {
			fmt.Fprintf(&b, ": the same packages as template %s", other)
		} else if v != "" {
			shown[v] = t.Name
			fmt.Fprintf(&b, ": %s", v)
		}
		l := t.Limits
		fmt.Fprintf(&b, ". Limits: %d MB memory, %g CPU, %d processes, %d MB disk, %s default timeout.",
			l.MemoryMB, l.CPUs, l.Processes, l.DiskMB, seconds(l.TimeoutMS))
		b.WriteString(routing(t))
	}
	return b.String()
}

// routing says which requests naming no template t serves, when the
// template says (DefaultFor, WarmImports).
func routing(t core.TemplateInfo) string {
	var parts []string
	if len(t.WarmImports) > 0 {
		parts = append(parts, fmt.Sprintf("run_code code that imports %s (already loaded here)", strings.Join(t.WarmImports, ", ")))
	}
	for _, d := range t.DefaultFor {
		switch d {
		case "runs":
			parts = append(parts, "other run_code code")
		case "sessions":
			parts = append(parts, "sessions")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf(" With no template named, %s in %s get this one.", strings.Join(parts, " and "), t.Language)
}

// templateNames lists the values a template field accepts, sorted.
func templateNames(tmpls []core.TemplateInfo) []string {
	var names []string
	for _, t := range tmpls {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

// versions renders a template's versions, sorted by name.
func versions(v map[string]string) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(v)) {
		parts = append(parts, name+" "+v[name])
	}
	return strings.Join(parts, ", ")
}

func seconds(ms int) string {
	return fmt.Sprintf("%gs", float64(ms)/1000)
}

// languages lists the values a language field accepts: the templates'
// languages, sorted, without repeats.
func languages(tmpls []core.TemplateInfo) []string {
	var names []string
	for _, t := range tmpls {
		names = append(names, t.Language)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Tool descriptions. Each ends with the environment for the tools that
// run code.
const (
	descRunCode = "Run a program once in a fresh sandbox and get its standard output, standard error and exit code. " +
		"Nothing persists between calls: for state across steps, plots or a value to inspect, use create_session and execute. " +
		"Print what you want to see."
	descCreateSession = "Open a stateful interpreter session (like a notebook kernel). Returns a session_id for execute, " +
		"write_file, read_file, list_files, pause_session, resume_session, fork_session and close_session. The session closes when idle past its TTL, when this MCP " +
		"session ends, or with close_session; close it when done."
	descExecute = "Run a cell in a session: variables, imports and functions from earlier cells stay defined. " +
		"Returns what the cell printed, the value of its last expression, matplotlib figures as PNG images, and on an " +
		"exception the traceback (the result is then an error)."
	descWriteFile = "Write a file into a session's /workspace, where its code can open it by a relative path. " +
		"Use encoding base64 for binary content."
	descReadFile = "Read a file from a session's /workspace, e.g. one its code saved. Text comes back as text, " +
		"PNG and JPEG images as images, other binary content as base64."
	descListFiles = "List a directory of a session's /workspace (names, sizes, directories)."
	descClose     = "Close a session and free its sandbox. Its state and files are gone."
	descPause     = "Hibernate a session you will not use for a while: its variables, imports and files are saved to disk " +
		"and its sandbox freed. Nothing is lost: the next execute or file tool on it (or resume_session) wakes it as it was, " +
		"only slower. Idle sessions may also be hibernated by the server on their own."
	descResume = "Wake a hibernated session now, so that the next cell does not wait for it; says whether it was " +
		"hibernated. A session that is awake is left as it is."
	descFork = "Copy a session: count new sessions (1 to 100), each starting with the exact variables, imports and files " +
		"of this one, to try different next steps side by side. The session copied is unchanged. Each copy has its own " +
		"session_id and random seed, counts against your session limit, and closes like a session from create_session."
)

package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Languages the agent can drive.
const (
	LanguagePython = "python"
	LanguageNode   = "node"
)

// SearchPath is the PATH user processes see and where a bare interpreter
// name is looked up. The agent's own environment is never consulted.
const SearchPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Config is what the agent needs to know before the first frame.
type Config struct {
	// Language is LanguagePython or LanguageNode.
	Language string `json:"language"`
	// Interpreter is the interpreter's path, or a name looked up on
	// SearchPath. Empty means python3 or node.
	Interpreter string `json:"interpreter,omitempty"`
	// UID and GID run user code. Both zero means the agent's own user.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// Workdir is the program's working directory and HOME; request files
	// are written beneath it. It is created if missing.
	Workdir string `json:"workdir"`
	// Warmup is code the interpreter runs before it waits for the request.
	Warmup string `json:"warmup,omitempty"`
	// HeapMB caps V8's old generation (node's --max-old-space-size), in
	// MiB; zero leaves V8's own default. Node only.
	HeapMB int `json:"heap_mb,omitempty"`
	// NodeStartupDir holds node's startup snapshots (node
	// --snapshot-blob), one per heap ceiling (StartupBlobName); the driver
	// starts from the one for HeapMB when it is there. Empty means none.
	// Other languages ignore it.
	NodeStartupDir string `json:"node_startup_dir,omitempty"`
	// HostKernel says the sandbox runs on the host's Linux kernel (the
	// runc runtime), which charges every task to the uid it runs as
	// against RLIMIT_NPROC, the interpreter included; gVisor charges a
	// task to the uid that cloned it (see chargedTasks).
	HostKernel bool `json:"host_kernel,omitempty"`
}

// Validate reports the first problem with c.
func (c Config) Validate() error {
	switch c.Language {
	case LanguagePython, LanguageNode:
	default:
		return fmt.Errorf("unknown language %q", c.Language)
	}
	if c.UID < 0 || c.GID < 0 {
		return fmt.Errorf("negative uid %d or gid %d", c.UID, c.GID)
	}
	if c.Workdir == "" || !filepath.IsAbs(c.Workdir) || filepath.Clean(c.Workdir) != c.Workdir {
		return fmt.Errorf("workdir %q is not a clean absolute path", c.Workdir)
	}
	if strings.ContainsRune(c.Warmup, 0) {
		return errors.New("warm-up code contains a NUL byte")
	}
	if c.HeapMB < 0 || (c.HeapMB > 0 && c.Language != LanguageNode) {
		return fmt.Errorf("heap ceiling %d MiB: only node takes one, and never negative", c.HeapMB)
	}
	if c.NodeStartupDir != "" && !filepath.IsAbs(c.NodeStartupDir) {
		return fmt.Errorf("node startup snapshot directory %q is not an absolute path", c.NodeStartupDir)
	}
	return nil
}

// switchesUser reports whether user code runs as another user.
func (c Config) switchesUser() bool { return c.UID != 0 || c.GID != 0 }

func (c Config) interpreterName() string {
	if c.Interpreter != "" {
		return c.Interpreter
	}
	if c.Language == LanguageNode {
		return "node"
	}
	return "python3"
}

// lookInterpreter resolves the interpreter's name (see lookProgram).
func lookInterpreter(name string) (string, error) { return lookProgram("interpreter", name) }

// lookProgram resolves name, a program the agent starts (what names it in
// errors): a name with a slash is used as is, a bare name is looked up on
// SearchPath.
func lookProgram(what, name string) (string, error) {
	if strings.Contains(name, "/") {
		if err := checkExecutable(name); err != nil {
			return "", fmt.Errorf("%s %s: %w", what, name, err)
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(SearchPath) {
		p := filepath.Join(dir, name)
		if checkExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s %s not found in %s: %w", what, name, SearchPath, os.ErrNotExist)
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

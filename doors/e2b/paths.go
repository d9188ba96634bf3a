package e2bdoor

import (
	"fmt"
	"path"
	"strings"
)

// workspaceDir is where a session's files live inside its sandbox.
const workspaceDir = "/workspace"

// maxPathBytes bounds a path the SDK sends.
const maxPathBytes = 4096

// workspacePath maps an E2B path onto the session's /workspace: E2B's
// home directory /home/user (and /workspace itself) is the workspace's
// root, a relative path is relative to it. It returns the path relative
// to the workspace, "." for its root; any other place is refused.
func workspacePath(p string) (string, error) {
	switch {
	case p == "":
		return "", invalid("path is required")
	case len(p) > maxPathBytes:
		return "", invalid(fmt.Sprintf("path is too long (at most %d bytes)", maxPathBytes))
	case strings.IndexByte(p, 0) >= 0:
		return "", invalid("path must not contain a NUL byte")
	}
	if !strings.HasPrefix(p, "/") {
		p = homeDir + "/" + p
	}
	clean := path.Clean(p)
	for _, root := range []string{homeDir, workspaceDir} {
		if clean == root {
			return ".", nil
		}
		if rel, ok := strings.CutPrefix(clean, root+"/"); ok {
			return rel, nil
		}
	}
	return "", invalid(fmt.Sprintf("path %q is outside %s: Paddock serves only the sandbox's workspace (/workspace inside it), as %s", p, homeDir, homeDir))
}

// e2bPath is the E2B path of a workspace-relative path.
func e2bPath(rel string) string {
	if rel == "." || rel == "" {
		return homeDir
	}
	return homeDir + "/" + rel
}

// sandboxPath is the path inside the sandbox of a workspace-relative path,
// for commands.
func sandboxPath(rel string) string {
	if rel == "." || rel == "" {
		return workspaceDir
	}
	return workspaceDir + "/" + rel
}

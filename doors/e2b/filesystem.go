package e2bdoor

import (
	"path"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/runner"
)

// maxListDepth and maxListEntries bound a recursive ListDir.
const (
	maxListDepth   = 8
	maxListEntries = 10000
)

// entryInfo is envd's filesystem.EntryInfo in protobuf's JSON mapping.
type entryInfo struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	Path         string `json:"path"`
	Size         int64  `json:"size,string"`
	Mode         uint32 `json:"mode"`
	Permissions  string `json:"permissions"`
	Owner        string `json:"owner"`
	Group        string `json:"group"`
	ModifiedTime string `json:"modifiedTime,omitempty"`
}

// The owner and group of the workspace's files: the sandbox's uid 1000.
const fileOwner = "sandbox"

func entryOf(dir string, fi runner.FileInfo) entryInfo {
	rel := fi.Name
	if dir != "." {
		rel = dir + "/" + fi.Name
	}
	e := entryInfo{
		Name:        fi.Name,
		Type:        "FILE_TYPE_FILE",
		Path:        e2bPath(rel),
		Size:        fi.Size,
		Mode:        permBits(fi.Mode),
		Permissions: fi.Mode,
		Owner:       fileOwner,
		Group:       fileOwner,
	}
	switch {
	case fi.IsDir:
		e.Type = "FILE_TYPE_DIRECTORY"
		e.Mode |= 1 << 31 // Go's os.ModeDir, as envd reports it
	case len(fi.Mode) > 0 && fi.Mode[0] == 'l':
		e.Type = "FILE_TYPE_SYMLINK"
	}
	if !fi.MTime.IsZero() {
		e.ModifiedTime = fi.MTime.UTC().Format(protoTime)
	}
	return e
}

// permBits reads the permission bits of an ls-style mode ("-rw-r--r--").
func permBits(mode string) uint32 {
	if len(mode) < 10 {
		return 0
	}
	var bits uint32
	for i, ch := range mode[len(mode)-9:] {
		if ch != '-' {
			bits |= 1 << (8 - i)
		}
	}
	return bits
}

type pathRequest struct {
	Path  string `json:"path"`
	Depth uint32 `json:"depth"`
}

type moveRequest struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
}

// filesystem serves envd's filesystem.Filesystem unary methods on the
// sandbox's main context.
func (d *door) filesystem(c *gin.Context) {
	switch c.Param("method") {
	case "ListDir":
		d.listDir(c)
	case "Stat":
		d.stat(c)
	case "MakeDir":
		d.fsCommand(c, "MakeDir")
	case "Remove":
		d.fsCommand(c, "Remove")
	case "Move":
		d.move(c)
	default:
		unknownMethod(c, "filesystem.Filesystem")
	}
}

func (d *door) listDir(c *gin.Context) {
	var req pathRequest
	if err := d.readUnary(c, &req); err != nil {
		failConnect(c, err)
		return
	}
	rel, err := workspacePath(req.Path)
	if err != nil {
		failConnect(c, err)
		return
	}
	depth := max(int(req.Depth), 1)
	if depth > maxListDepth {
		failConnect(c, invalid("depth: at most 8"))
		return
	}
	sb := sandboxOf(c)
	entries := []entryInfo{}
	var walk func(dir string, level int) error
	walk = func(dir string, level int) error {
		files, err := d.core.ListFiles(c.Request.Context(), sb.owner, sb.id, dir)
		if err != nil {
			return err
		}
		for _, fi := range files {
			if len(entries) == maxListEntries {
				return invalid("the listing passes 10000 entries: list a smaller depth or directory")
			}
			e := entryOf(dir, fi)
			entries = append(entries, e)
			if fi.IsDir && level < depth {
				sub := fi.Name
				if dir != "." {
					sub = dir + "/" + fi.Name
				}
				if err := walk(sub, level+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(rel, 1); err != nil {
		failConnect(c, err)
		return
	}
	d.touch(sb, sb.id)
	c.JSON(200, map[string]any{"entries": entries})
}

// stat describes one path: the workspace root itself, or an entry of its
// parent's listing.
func (d *door) stat(c *gin.Context) {
	var req pathRequest
	if err := d.readUnary(c, &req); err != nil {
		failConnect(c, err)
		return
	}
	rel, err := workspacePath(req.Path)
	if err != nil {
		failConnect(c, err)
		return
	}
	sb := sandboxOf(c)
	if rel == "." {
		root := entryInfo{Name: "user", Type: "FILE_TYPE_DIRECTORY", Path: homeDir, Mode: 1<<31 | 0o755,
			Permissions: "drwxr-xr-x", Owner: fileOwner, Group: fileOwner}
		c.JSON(200, map[string]any{"entry": root})
		return
	}
	dir, name := path.Split(rel)
	dir = path.Clean(dir + ".")
	files, err := d.core.ListFiles(c.Request.Context(), sb.owner, sb.id, dir)
	if err != nil {
		failConnect(c, err)
		return
	}
	d.touch(sb, sb.id)
	for _, fi := range files {
		if fi.Name == name {
			c.JSON(200, map[string]any{"entry": entryOf(dir, fi)})
			return
		}
	}
	failConnect(c, notFound("path "+req.Path+" not found"))
}

// protoTime is google.protobuf.Timestamp's JSON form with all nine
// fractional digits (protobuf-es accepts 0, 3, 6 or 9).
const protoTime = "2006-01-02T15:04:05.000000000Z"

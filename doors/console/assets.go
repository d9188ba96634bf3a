package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
)

// files are the console's assets, served under /console/ by their path
// below assets/.
//
//go:embed assets
var files embed.FS

// asset is one embedded file ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// contentTypes are the types of the extensions the console ships; a file
// of another extension is a bug that loadAssets reports.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

// loadAssets reads every embedded file, keyed by its path below assets/.
func loadAssets() (map[string]asset, error) {
	out := map[string]asset{}
	err := fs.WalkDir(files, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			return fmt.Errorf("console asset %s: no content type for its extension", name)
		}
		body, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		out[name[len("assets/"):]] = newAsset(body, ct)
		return nil
	})
	return out, err
}

// newAsset is body as served with type ct, its ETag from its bytes.
func newAsset(body []byte, ct string) asset {
	sum := sha256.Sum256(body)
	return asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

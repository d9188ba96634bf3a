package runsc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/paddock-dev/paddock/runner"
)

// A restore must render the very agent command line its checkpoint ran
// (runsc refuses an image whose container args differ), and a sandbox's
// warm-up code is part of that line: the pool starts some sandboxes of a
// template with it (restored from its snapshot, refilled in the
// background) and some without (a start on the request path, a start
// with other limits). So a hibernated image keeps the line it was taken
// with beside it, and Wake takes the warm-up from there.

// argsFile is the agent command line beside a hibernated image.
const argsFile = "paddock-agent-args.json"

// saveArgs copies container id's agent command line from its bundle into
// dir.
func (rt *Runtime) saveArgs(id, dir string) error {
	b, err := os.ReadFile(filepath.Join(rt.bundles, id, "config.json"))
	if err != nil {
		return fmt.Errorf("reading the bundle of %s: %w", id, err)
	}
	var cfg struct {
		Process struct {
			Args []string `json:"args"`
		} `json:"process"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("decoding the bundle of %s: %w", id, err)
	}
	out, err := json.Marshal(cfg.Process.Args)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, argsFile), out, 0o600)
}

// withSavedWarmup is spec with the warm-up code of the image in dir, when
// the image kept its command line; spec as it is for an image without.
func withSavedWarmup(spec runner.Spec, dir string) (runner.Spec, error) {
	b, err := os.ReadFile(filepath.Join(dir, argsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return spec, nil
	}
	if err != nil {
		return spec, err
	}
	var args []string
	if err := json.Unmarshal(b, &args); err != nil {
		return spec, fmt.Errorf("decoding %s: %w", argsFile, err)
	}
	spec.Warmup = ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--warmup-b64="); ok {
			w, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return spec, fmt.Errorf("decoding the warm-up in %s: %w", argsFile, err)
			}
			spec.Warmup = string(w)
		}
	}
	return spec, nil
}

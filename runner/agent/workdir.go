package agent

import (
	"fmt"
	"os"
)

// openWorkdir creates the working directory, gives it to the user and
// opens it as the root every request file is written beneath.
func openWorkdir(cfg Config) (*os.Root, error) {
	if err := os.MkdirAll(cfg.Workdir, 0o755); err != nil {
		return nil, fmt.Errorf("creating workdir: %w", err)
	}
	if cfg.switchesUser() {
		if err := os.Chown(cfg.Workdir, cfg.UID, cfg.GID); err != nil {
			return nil, fmt.Errorf("chowning workdir: %w", err)
		}
	}
	root, err := os.OpenRoot(cfg.Workdir)
	if err != nil {
		return nil, fmt.Errorf("opening workdir: %w", err)
	}
	return root, nil
}

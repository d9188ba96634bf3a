package kubetest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// probeInterval is how often a starting server is asked whether it is
// ready. The wait ends at the first ready answer, the process's exit or the
// context's end, whichever comes first.
const probeInterval = 100 * time.Millisecond

// waitReady polls probe until it succeeds. It gives up as soon as the
// process exits, and when ctx ends.
func waitReady(ctx context.Context, p *process, probe func(context.Context) error) error {
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := probe(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.exited()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last probe: %v); its log ends:\n%s", p.name, ctx.Err(), err, p.tail())
		case <-t.C:
		}
	}
}

// getOK answers nil when url answers 200 with a body holding want.
func getOK(ctx context.Context, c *http.Client, url, token, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		return fmt.Errorf("GET %s: %s: %.300s", url, resp.Status, body)
	}
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/templates"
)

// A server whose python root filesystem is still being built serves node
// at once on real gVisor: /readyz names node alone, a python run is
// refused with template_building and Retry-After, and once the build is
// done python's pool fills and its runs answer, with the image's
// versions in /v1/templates. The build itself is held back by the test
// (it hands over the real cached image when released); building a root
// filesystem for real is rootfs's own test.
func TestE2EServesWhileARootfsBuilds(t *testing.T) {
	release := make(chan struct{})
	building := make(chan struct{}, 1)
	build := func(ctx context.Context, cfg *config, logger *slog.Logger) (*stack, error) {
		b := cfg.builder(io.Discard, logger)
		lookup := func(tm templates.Template) (rootfs.Image, error) {
			if tm.Name == "python" {
				return rootfs.Image{}, rootfs.ErrNotBuilt
			}
			return b.Lookup(tm)
		}
		ensure := func(ctx context.Context, tm templates.Template) (rootfs.Image, error) {
			building <- struct{}{}
			select {
			case <-release:
				return b.Lookup(tm)
			case <-ctx.Done():
				return rootfs.Image{}, ctx.Err()
			}
		}
		return buildStackWith(ctx, cfg, logger, lookup, ensure)
	}
	e := startE2E(t, build, "--build-rootfs=true")
	<-building

	deadline := time.Now().Add(2 * time.Minute) // a safety net only
	for {
		var rz struct {
			Status         string   `json:"status"`
			ReadyTemplates []string `json:"ready_templates"`
			Templates      []struct {
				Name  string `json:"name"`
				Image string `json:"image"`
			} `json:"templates"`
		}
		code := getJSON(t, e.srv.URL+"/readyz", &rz)
		if strings.Join(rz.ReadyTemplates, ",") == "node" {
			if code != http.StatusServiceUnavailable || rz.Status != "starting" || rz.Templates[1].Name != "python" || rz.Templates[1].Image != "building" {
				t.Fatalf("readyz while python builds: %d %+v", code, rz)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node never ready alone: %d %+v", code, rz)
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, r := e.post(t, map[string]any{"language": "node", "code": "console.log(6*7)"})
	if code != http.StatusOK || r.Stdout != "42\n" {
		t.Fatalf("node run while python builds: HTTP %d %+v", code, r)
	}
	resp, err := http.Post(e.srv.URL+"/v1/run", "application/json", strings.NewReader(`{"language":"python","code":"print(1)"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"code":"template_building"`) || resp.Header.Get("Retry-After") != "10" {
		t.Fatalf("python run while it builds: %d %s (Retry-After %q), want 503 template_building", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}

	close(release)
	for !e.st.Pool.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("python's pool not ready after its root filesystem came")
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, r = e.post(t, map[string]any{"language": "python", "code": "print(6*7)"})
	if code != http.StatusOK || r.Stdout != "42\n" || !r.Warm {
		t.Fatalf("python run once built: HTTP %d %+v, want a warm 42", code, r)
	}
	var tl struct {
		Templates []struct {
			Name     string            `json:"name"`
			Versions map[string]string `json:"versions"`
		} `json:"templates"`
	}
	getJSON(t, e.srv.URL+"/v1/templates", &tl)
	for _, tm := range tl.Templates {
		if tm.Name == "python" && tm.Versions["python"] == "" {
			t.Errorf("python's versions after its late build: %v, want the image's", tm.Versions)
		}
	}
}

// getJSON GETs url into v and returns the status.
func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode
}

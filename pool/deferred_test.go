package pool_test

import (
	"errors"
	"testing"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestDeferredTemplateWaitsForItsRootfs(t *testing.T) {
	rt := &runnertest.Runtime{}
	node := tmpl("node", 1)
	node.Deferred = true
	node.Kernels = 1
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 1), node}})
	waitFor(t, "python filled", readyCount(m, "python"))

	// The other template serves while node's root filesystem is built.
	lease, err := m.Acquire(t.Context(), "python")
	if err != nil {
		t.Fatalf("Acquire python: %v", err)
	}
	m.Release(lease.Sandbox)
	var unavailable *pool.UnavailableError
	if _, err := m.Acquire(t.Context(), "node"); !errors.As(err, &unavailable) || unavailable.Failed || !errors.Is(err, pool.ErrUnavailable) {
		t.Fatalf("Acquire node before Provide = %v, want an UnavailableError still building", err)
	}
	if _, err := m.Run(t.Context(), "node", runner.RunRequest{Code: "x"}, nil); !errors.Is(err, pool.ErrUnavailable) {
		t.Fatalf("Run node before Provide = %v, want ErrUnavailable", err)
	}
	if _, _, err := m.AcquireKernel("node", pool.RunOptions{}); !errors.Is(err, pool.ErrUnavailable) {
		t.Fatalf("AcquireKernel node before Provide = %v, want ErrUnavailable", err)
	}
	if s := stats(m, "node"); s.Image != pool.ImageBuilding || s.Ready != 0 || s.Starting != 0 || s.Healthy {
		t.Errorf("node stats before Provide: image %q, ready %d, starting %d, healthy %v; want building and nothing kept",
			s.Image, s.Ready, s.Starting, s.Healthy)
	}
	if m.Ready() {
		t.Error("Ready with a template still building")
	}
	for _, sb := range rt.Sandboxes() {
		if sb.Spec.Template == "node" {
			t.Fatalf("a node sandbox was started before its root filesystem was provided")
		}
	}

	if err := m.Provide("node", "/images/node", "node@1"); err != nil {
		t.Fatalf("Provide: %v", err)
	}
	waitFor(t, "node filled", func() bool { s := stats(m, "node"); return s.Ready == 1 && s.KernelsReady == 1 })
	waitFor(t, "ready", m.Ready)
	lease, err = m.Acquire(t.Context(), "node")
	if err != nil {
		t.Fatalf("Acquire node after Provide: %v", err)
	}
	defer m.Release(lease.Sandbox)
	spec := lease.Sandbox.(*runnertest.Sandbox).Spec
	if spec.Rootfs != "/images/node" || spec.RootfsID != "node@1" || spec.Template != "node" {
		t.Errorf("node sandbox spec rootfs %q id %q template %q; want the provided ones", spec.Rootfs, spec.RootfsID, spec.Template)
	}
	if s := stats(m, "node"); s.Image != pool.ImageReady {
		t.Errorf("node image = %q after Provide, want ready", s.Image)
	}
	if err := m.Provide("node", "/images/other", "node@2"); err == nil {
		t.Error("a second Provide succeeded")
	}
	if err := m.Provide("python", "/x", "x"); err == nil {
		t.Error("Provide of a template that is not deferred succeeded")
	}
}

func TestDeferredTemplateThatFails(t *testing.T) {
	rt := &runnertest.Runtime{}
	node := tmpl("node", 1)
	node.Deferred = true
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{node}})
	if err := m.Fail("node"); err != nil {
		t.Fatal(err)
	}
	var unavailable *pool.UnavailableError
	if _, err := m.Acquire(t.Context(), "node"); !errors.As(err, &unavailable) || !unavailable.Failed {
		t.Fatalf("Acquire after Fail = %v, want a failed UnavailableError", err)
	}
	if s := stats(m, "node"); s.Image != pool.ImageFailed {
		t.Errorf("image = %q, want failed", s.Image)
	}
	if rt.Starts() != 0 {
		t.Errorf("starts = %d, want none", rt.Starts())
	}
	if err := m.Fail("ghost"); !errors.Is(err, pool.ErrUnknownTemplate) {
		t.Errorf("Fail of an unknown template = %v", err)
	}
}

func TestProvideBeforeStart(t *testing.T) {
	rt := &runnertest.Runtime{}
	node := tmpl("node", 1)
	node.Deferred = true
	m, err := pool.New(rt, pool.Config{Templates: []pool.Template{node}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Provide("node", "/images/node", "node@1"); err != nil {
		t.Fatal(err)
	}
	if rt.Starts() != 0 {
		t.Errorf("starts before Start = %d", rt.Starts())
	}
	m.Start()
	waitFor(t, "node filled", readyCount(m, "node"))
	if err := m.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := m.Provide("node", "/x", "x"); err == nil {
		t.Error("Provide after Close succeeded")
	}
	if rt.Live() != 0 {
		t.Errorf("live after Close = %d", rt.Live())
	}
}

package main

import (
	"slices"
	"testing"
)

// jupyterHibernateReport is what doors/clients/jupyter_hibernate.mjs
// prints.
type jupyterHibernateReport struct {
	Connection []string `json:"connection"`
	Status     []string `json:"status"`
	First      jupCell  `json:"first"`
	Paused     struct {
		Status int    `json:"status"`
		State  string `json:"state"`
	} `json:"paused"`
	Asleep      hibernatedSession `json:"asleep"`
	ModelAsleep struct {
		State       string `json:"state"`
		Connections int    `json:"connections"`
	} `json:"modelAsleep"`
	Second     jupCell           `json:"second"`
	SameSocket bool              `json:"sameSocket"`
	Awake      hibernatedSession `json:"awake"`
}

// TestE2EJupyterHibernate: the session behind a kernel that a connected
// @jupyterlab/services client holds open hibernates, paused through /v1
// or idle past --hibernate-after, and the next cell on the same
// WebSocket wakes it: 42 from x = 41 at execution count 2, busy then
// idle, no reconnect, no restart. The open socket neither stops the
// idle hibernation nor notices it.
func TestE2EJupyterHibernate(t *testing.T) {
	e, token := jupyterE2E(t, "--hibernate-after=1s")
	for _, mode := range []string{"pause", "idle"} {
		t.Run(mode, func(t *testing.T) {
			var r jupyterHibernateReport
			jupyterNode(t, &r, "jupyter_hibernate.mjs", e.srv.URL, token, mode)
			if r.First.Reply.Status != "ok" || r.First.Reply.Count != 1 {
				t.Fatalf("x = 41: %+v", r.First)
			}
			if mode == "pause" && (r.Paused.Status != 200 || r.Paused.State != "hibernated") {
				t.Errorf("POST /v1/sessions/{id}/pause: %+v, want 200 hibernated", r.Paused)
			}
			if r.Asleep.State != "hibernated" || r.Asleep.ImageBytes <= 0 || r.Asleep.Count != 1 {
				t.Errorf("the session while the socket is open: %+v, want hibernated at count 1 with an image", r.Asleep)
			}
			// The front end sees an idle kernel with its connection.
			if r.ModelAsleep.State != "idle" || r.ModelAsleep.Connections != 1 {
				t.Errorf("GET /api/kernels/{id} while hibernated: %+v, want idle with 1 connection", r.ModelAsleep)
			}
			s := r.Second
			if s.Reply.Status != "ok" || s.Reply.Count != 2 || s.InputCount == nil || *s.InputCount != 2 ||
				s.result() != "42" || s.Results[0].Count != 2 || len(s.Errors) != 0 ||
				!slices.Equal(s.Statuses, []string{"busy", "idle"}) {
				t.Errorf("x + 1 on the same socket: %+v, want 42 at count 2, busy then idle", s)
			}
			if !r.SameSocket || len(r.Connection) != 0 {
				t.Errorf("same socket %v, connection changes %v; want the first socket, never reconnected", r.SameSocket, r.Connection)
			}
			if want := []string{"busy", "idle", "busy", "idle"}; !slices.Equal(r.Status, want) {
				t.Errorf("the client's kernel statuses %v, want %v (no restart, no dead kernel)", r.Status, want)
			}
			if r.Awake.State != "idle" || r.Awake.Start != "wake" || r.Awake.Count != 2 {
				t.Errorf("the session after the cell: %+v, want idle on a woken sandbox at count 2", r.Awake)
			}
		})
	}
}

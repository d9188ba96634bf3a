package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/store"
)

// TestE2EEgressHistory: the history keeps the egress policy a run and a
// session's cell had, as the server narrowed it, and the GraphQL door
// gives it back; a run without a network has none. No packet is sent:
// the policy is recorded whether or not the code uses it.
func TestE2EEgressHistory(t *testing.T) {
	e := newE2EWith(t, "--egress-allow=upstream.test:8080 *.allowed.test:8080")

	for _, tc := range []struct {
		name    string
		network any
		want    string
	}{
		{"without a network", nil, ""},
		{"narrowed", map[string]any{"allow": []string{"upstream.test:8080", "other.test:8080"}}, "allow upstream.test:8080"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"language": "python", "code": "print(1)"}
			if tc.network != nil {
				body["network"] = tc.network
			}
			if status, raw := e.do(t, "POST", "/v1/run", body, ""); status != http.StatusOK {
				t.Fatalf("HTTP %d %s", status, raw)
			}
			if got := e.lastRun(t).Network; got != tc.want {
				t.Errorf("history network %q, want %q", got, tc.want)
			}
		})
	}

	t.Run("session cell", func(t *testing.T) {
		id := e.newSession(t, map[string]any{"language": "python", "network": map[string]any{"allow": []string{"a.allowed.test:8080"}}})
		e.exec(t, id, "1 + 1")
		cells := e.history(t, store.RunFilter{Kind: store.KindCell, SessionID: id})
		if len(cells) != 1 || cells[0].Network != "allow a.allowed.test:8080" {
			t.Errorf("cells %+v, want one with network allow a.allowed.test:8080", cells)
		}
	})

	t.Run("graphql", func(t *testing.T) {
		status, raw := e.do(t, "POST", "/v1/graphql", map[string]any{"query": `{ runs(first: 3) { items { kind network { mode allow deny } } } }`}, "")
		var a struct {
			Data struct {
				Runs struct {
					Items []struct {
						Kind    string
						Network *struct {
							Mode        string
							Allow, Deny []string
						}
					}
				}
			}
		}
		if err := json.Unmarshal(raw, &a); err != nil || status != http.StatusOK {
			t.Fatalf("HTTP %d %s", status, raw)
		}
		var got []string // newest first
		for _, it := range a.Data.Runs.Items {
			if it.Network == nil {
				got = append(got, it.Kind+" -")
			} else {
				got = append(got, it.Kind+" "+it.Network.Mode+" "+strings.Join(it.Network.Allow, " ")+"; "+strings.Join(it.Network.Deny, " "))
			}
		}
		want := []string{"CELL allowlist a.allowed.test:8080; ", "RUN allowlist upstream.test:8080; ", "RUN -"}
		if !slices.Equal(got, want) {
			t.Errorf("runs %q, want %q", got, want)
		}
	})
}

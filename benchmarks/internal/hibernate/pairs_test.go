package hibernate

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNewestImage(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"s1-1", "s1-2", "s1-10", "s12-40", "s1-x"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "s1-99"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := newestImage(dir, "s1")
	if err != nil || got != "s1-10" {
		t.Errorf("newestImage(s1) = %q, %v; want s1-10", got, err)
	}
	if got, err := newestImage(dir, "s12"); err != nil || got != "s12-40" {
		t.Errorf("newestImage(s12) = %q, %v; want s12-40", got, err)
	}
	if _, err := newestImage(dir, "s2"); err == nil {
		t.Error("an image for a session with none")
	}
}

func TestRefusal(t *testing.T) {
	tests := []struct {
		name string
		in   apiError
		want string
	}{
		{"the API's error body", apiError{429, `{"code":"too_many_sessions","message":"3 of 3 open"}`},
			`HTTP 429 too_many_sessions ("3 of 3 open")`},
		{"another body", apiError{502, "bad gateway"}, "HTTP 502: bad gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := refusal(tt.in); got != tt.want {
				t.Errorf("refusal = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCellText(t *testing.T) {
	var c cell
	c.Results = append(c.Results, struct {
		Data map[string]any `json:"data"`
	}{Data: map[string]any{"image/png": "…"}}, struct {
		Data map[string]any `json:"data"`
	}{Data: map[string]any{"text/plain": "2"}})
	if got := c.text(); got != "2" {
		t.Errorf("text = %q, want 2", got)
	}
	if got := (cell{}).text(); got != "" {
		t.Errorf("text of no results = %q", got)
	}
}

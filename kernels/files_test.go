package kernels_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestFiles(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	if err := f.m.WriteFile(t.Context(), "", info.ID, "data/a.csv", []byte("x,y\n")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	tests := []struct {
		name     string
		op       func() (any, error)
		want     any
		wantErr  error
		wantKind runner.FileErrorKind // a *runner.FileError of this kind instead of wantErr
	}{
		{name: "read", op: func() (any, error) {
			b, err := f.m.ReadFile(t.Context(), "", info.ID, "data/a.csv", 100)
			return string(b), err
		}, want: "x,y\n"},
		{name: "read too large", op: func() (any, error) {
			return f.m.ReadFile(t.Context(), "", info.ID, "data/a.csv", 2)
		}, wantKind: runner.FileTooLarge},
		{name: "read missing", op: func() (any, error) {
			return f.m.ReadFile(t.Context(), "", info.ID, "nope", 100)
		}, wantErr: runner.ErrNotFound},
		{name: "write escaping", op: func() (any, error) {
			return nil, f.m.WriteFile(t.Context(), "", info.ID, "../x", nil)
		}, wantKind: runner.FileBadPath},
		{name: "list", op: func() (any, error) {
			return f.m.ListFiles(t.Context(), "", info.ID, "data")
		}, want: []runner.FileInfo{{Name: "a.csv", Size: 4, Mode: "-rw-r--r--", MTime: runnertest.FileMTime}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.op()
			if tc.wantKind != "" {
				var fe *runner.FileError
				if !errors.As(err, &fe) || fe.Kind != tc.wantKind {
					t.Fatalf("error = %v, want a FileError of kind %s", err, tc.wantKind)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
	if got := state(f.m, "", info.ID)(); got != "idle" {
		t.Errorf("State = %q after file errors, want idle (they are not kernel losses)", got)
	}
}

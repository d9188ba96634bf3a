package wire_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestCommandOutput(t *testing.T) {
	t.Parallel()
	o := wire.CommandOutput{ID: 0x0102030405060708, Stream: wire.StreamStderr, Data: []byte("hi\n")}
	got := wire.AppendCommandOutput(nil, o)
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 2, 'h', 'i', '\n'}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AppendCommandOutput = %v, want %v", got, want)
	}
	back, err := wire.ParseCommandOutput(got)
	if err != nil || !reflect.DeepEqual(back, o) {
		t.Fatalf("ParseCommandOutput = %+v, %v; want %+v", back, err, o)
	}
	empty, err := wire.ParseCommandOutput([]byte{0, 0, 0, 0, 0, 0, 0, 1, 1})
	if err != nil || empty.ID != 1 || empty.Stream != wire.StreamStdout || len(empty.Data) != 0 {
		t.Fatalf("ParseCommandOutput of an empty chunk = %+v, %v", empty, err)
	}
	for name, p := range map[string][]byte{
		"short":          {0, 0, 0, 0, 0, 0, 0, 1},
		"unknown stream": {0, 0, 0, 0, 0, 0, 0, 1, 3, 'x'},
		"stream zero":    {0, 0, 0, 0, 0, 0, 0, 1, 0},
	} {
		if _, err := wire.ParseCommandOutput(p); !errors.Is(err, wire.ErrBadCommandOutput) {
			t.Errorf("%s: ParseCommandOutput = %v, want ErrBadCommandOutput", name, err)
		}
	}
}

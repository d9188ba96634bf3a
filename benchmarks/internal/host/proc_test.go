package host

import (
	"strings"
	"testing"
)

func TestParseProcStatus(t *testing.T) {
	st, err := ParseProcStatus(strings.NewReader("Name:\tpython3\nState:\tS (sleeping)\nVmRSS:\t   86016 kB\nRssAnon:\t   51200 kB\nRssFile:\t   34816 kB\nRssShmem:\t       0 kB\nThreads:\t1\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"VmRSS": 88080384, "RssAnon": 52428800, "RssFile": 35651584, "RssShmem": 0}
	if len(st) != len(want) {
		t.Errorf("got %v, want %v", st, want)
	}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("%s = %d, want %d", k, st[k], v)
		}
	}
	if _, err := ParseProcStatus(strings.NewReader("VmRSS:\tlots kB\n")); err == nil {
		t.Error("a non-numeric value parsed")
	}
}

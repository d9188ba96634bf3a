package main

import (
	"slices"
	"testing"
)

func TestParseClients(t *testing.T) {
	got, err := parseClients("1,2, 4,8,16")
	if err != nil || !slices.Equal(got, []int{1, 2, 4, 8, 16}) {
		t.Errorf("parseClients = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,-2", "two"} {
		if _, err := parseClients(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

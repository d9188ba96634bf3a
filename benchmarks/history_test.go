package main

import "testing"

func TestABBA(t *testing.T) {
	want := []int{0, 1, 1, 0, 0, 1, 1, 0, 0, 1}
	for i, w := range want {
		if got := abba(i); got != w {
			t.Errorf("abba(%d) = %d, want %d", i, got, w)
		}
	}
}

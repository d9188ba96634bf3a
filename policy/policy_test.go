package policy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/policy"
)

func TestRanges(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string // "" for accepted
	}{
		{"optional zero is the default", policy.Optional("timeout_ms", 0, 2000, 2000), ""},
		{"optional at the maximum", policy.Optional("timeout_ms", 2000, 2000, 2000), ""},
		{"optional over the maximum", policy.Optional("timeout_ms", 2001, 2000, 1000),
			"timeout_ms must be between 1 and 2000, or 0 for the default (1000); got 2001"},
		{"optional negative", policy.Optional("ttl_s", -1, 43200, 900),
			"ttl_s must be between 1 and 43200, or 0 for the default (900); got -1"},
		{"optional without a named default", policy.Optional("max_output_bytes", 1025, 1024, -1),
			"max_output_bytes must be between 1 and 1024, or 0 for the default; got 1025"},
		{"duration zero", policy.OptionalDuration("timeout", 0, time.Millisecond, 2*time.Second, time.Second), ""},
		{"duration under the least", policy.OptionalDuration("ttl", time.Millisecond, time.Second, time.Hour, time.Minute),
			"ttl must be between 1s and 1h0m0s, or 0 for the default (1m0s); got 1ms"},
		{"duration over", policy.OptionalDuration("timeout", 3*time.Second, time.Millisecond, 2*time.Second, time.Second),
			"timeout must be between 1ms and 2s, or 0 for the default (1s); got 3s"},
		{"within", policy.Within("limits.memory_mb", 64, 64, 1024, " (MiB)"), ""},
		{"within below", policy.Within("limits.memory_mb", 0, 64, 1024, " (MiB)"),
			"limits.memory_mb must be between 64 and 1024 (MiB); got 0"},
		{"within float over", policy.WithinFloat("limits.cpus", 1.51, 0.25, 1.5, " (cores)"),
			"limits.cpus must be between 0.25 and 1.5 (cores); got 1.51"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.want == "" && tc.err != nil:
				t.Fatalf("refused: %v", tc.err)
			case tc.want == "":
			case tc.err == nil:
				t.Fatalf("accepted, want %q", tc.want)
			case tc.err.Error() != tc.want:
				t.Fatalf("message %q, want %q", tc.err, tc.want)
			case !errors.Is(tc.err, policy.ErrOutOfRange):
				t.Fatalf("%v does not wrap ErrOutOfRange", tc.err)
			}
		})
	}
}

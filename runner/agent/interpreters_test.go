package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

// The agents under test run the interpreters of the templates' root
// filesystems, whose versions the images recorded when they were built:
// Python 3.11 with Debian's numpy, and Node 18.
func TestTemplateInterpreters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		language string
		code     string
		want     func(versions map[string]string) string
		prefix   string
	}{
		{
			language: LanguagePython,
			code:     "import sys, numpy\nprint(sys.version.split()[0], sys.executable, numpy.__version__, numpy.__file__)",
			want: func(v map[string]string) string {
				return v["python"] + " /usr/bin/python3 " + v["numpy"] + " /usr/lib/python3/dist-packages/numpy/__init__.py\n"
			},
			prefix: "3.11.",
		},
		{
			language: LanguageNode,
			code:     "console.log(process.version, process.execPath)",
			want:     func(v map[string]string) string { return v["node"] + " /usr/bin/node\n" },
			prefix:   "v18.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.language, func(t *testing.T) {
			t.Parallel()
			img := templateImage(t, tt.language)
			c := startAgent(t, testConfig(t, tt.language))
			c.hello()
			res := c.run(wire.Run{Code: tt.code})
			if exit := res.mustExit(t); exit.Reason != "ok" {
				t.Fatalf("exit %+v, stderr %q", exit, res.stderr)
			}
			if want := tt.want(img.Versions); string(res.stdout) != want || !strings.HasPrefix(want, tt.prefix) {
				t.Errorf("stdout %q, want %q (the image's versions, starting %s)", res.stdout, want, tt.prefix)
			}
		})
	}
}

// The driver reseeds numpy's global generator with random's: after the
// warm-up and again for the run, or when pinged. The warm-up counts
// numpy.random.seed calls.
func TestPythonReseedsNumpy(t *testing.T) {
	t.Parallel()
	const counting = "import numpy\n_seed = numpy.random.seed\nnumpy.calls = 0\n" +
		"def _counted(*a, **k):\n    numpy.calls += 1\n    _seed(*a, **k)\nnumpy.random.seed = _counted"
	for _, tc := range []struct {
		pings int
		want  string
	}{{0, "2\n"}, {1, "2\n"}, {2, "3\n"}} {
		t.Run(fmt.Sprint(tc.pings, " pings"), func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, LanguagePython)
			cfg.Warmup = counting
			c := startAgent(t, cfg)
			c.hello()
			for i := range tc.pings {
				c.ping(fmt.Sprint("p", i))
			}
			res := c.run(wire.Run{Code: "import numpy; print(numpy.calls)"})
			res.mustExit(t)
			if string(res.stdout) != tc.want {
				t.Errorf("numpy.random.seed calls = %q, want %q (stderr %q)", res.stdout, tc.want, res.stderr)
			}
		})
	}
}

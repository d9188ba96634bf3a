package core_test

import (
	"testing"

	"github.com/paddock-dev/paddock/core"
)

// pythonPair is the shipped Python pair: the pandas-ready template, warm
// for pandas and friends and the sessions' default, and the slim one, the
// default of plain runs.
var pythonPair = []core.Template{
	{Name: "node", Language: "node"},
	{Name: "python", Language: "python", WarmImports: []string{"matplotlib", "numpy", "pandas", "scipy", "seaborn"}, DefaultFor: []string{"sessions"}},
	{Name: "python-slim", Language: "python", DefaultFor: []string{"runs"}},
}

func TestRunRoutes(t *testing.T) {
	f := newFixture(t, core.Config{Templates: pythonPair})
	tests := []struct {
		name     string
		in       core.RunInput
		template string
	}{
		{name: "plain print", in: core.RunInput{Language: "python", Code: "print(1)"}, template: "python-slim"},
		{name: "stdlib imports", in: core.RunInput{Language: "python", Code: "import json, os\nprint(json.dumps(os.sep))"}, template: "python-slim"},
		{name: "import pandas", in: core.RunInput{Language: "python", Code: "import pandas as pd\nprint(pd.__version__)"}, template: "python"},
		{name: "from matplotlib", in: core.RunInput{Language: "python", Code: "import sys\nfrom matplotlib import pyplot"}, template: "python"},
		{name: "named slim with pandas", in: core.RunInput{Language: "python", Template: "python-slim", Code: "import pandas"}, template: "python-slim"},
		{name: "named full without language", in: core.RunInput{Template: "python", Code: "print(1)"}, template: "python"},
		{name: "node", in: core.RunInput{Language: "node", Code: "const pandas = require('pandas')"}, template: "node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := f.svc.CheckRun(core.Caller{}, tt.in)
			got := plan.Template()
			if err != nil || got != tt.template {
				t.Errorf("CheckRun(%+v) = %q, %v; want %q", tt.in, got, err, tt.template)
			}
		})
	}
}

func TestRouteErrors(t *testing.T) {
	f := newFixture(t, core.Config{Templates: pythonPair})
	tests := []struct {
		name    string
		in      core.RunInput
		code    string
		message string
	}{
		{name: "template of another language", in: core.RunInput{Language: "node", Template: "python-slim", Code: "1"},
			code: "template_language", message: `template "python-slim" runs python, not node`},
		{name: "unknown template", in: core.RunInput{Language: "python", Template: "python-tiny", Code: "1"},
			code: "unknown_template", message: `unknown template "python-tiny" (known: node, python, python-slim)`},
		{name: "template name as language", in: core.RunInput{Language: "python-slim", Code: "1"},
			code: "unknown_language", message: `unknown language "python-slim" (known: node, python)`},
		{name: "neither", in: core.RunInput{Code: "1"},
			code: "invalid_request", message: "language is required (one of: node, python)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.CheckRun(core.Caller{}, tt.in)
			if e := checkErr(t, tt.name, err, core.KindInvalid, tt.code); e.Message != tt.message {
				t.Errorf("message %q, want %q", e.Message, tt.message)
			}
			_, err = f.svc.TemplateOf(tt.in.Language, tt.in.Template)
			checkErr(t, tt.name+" (session)", err, core.KindInvalid, tt.code)
		})
	}
}

func TestSessionRoutes(t *testing.T) {
	f := newFixture(t, core.Config{Templates: pythonPair})
	for _, tc := range []struct{ language, template, want string }{
		{"python", "", "python"},
		{"python", "python-slim", "python-slim"},
		{"", "python-slim", "python-slim"},
		{"node", "", "node"},
	} {
		got, err := f.svc.TemplateOf(tc.language, tc.template)
		if err != nil || got.Name != tc.want {
			t.Errorf("TemplateOf(%q, %q) = %q, %v; want %q", tc.language, tc.template, got.Name, err, tc.want)
		}
	}
	if got, err := f.svc.Template("python"); err != nil || got.Name != "python" || len(got.WarmImports) != 5 {
		t.Errorf("Template(python) = %+v, %v; want the pandas-ready template", got, err)
	}
}

// Without claims, the template named as the language serves everything
// but the runs that import one of another template's warm modules; a
// server with only one Python template sends every Python run there.
func TestRouteFallbacks(t *testing.T) {
	tests := []struct {
		name      string
		templates []core.Template
		code      string
		want      string
	}{
		{name: "named as the language", code: "print(1)", want: "python", templates: []core.Template{
			{Name: "python-slim", Language: "python"}, {Name: "python", Language: "python"}}},
		{name: "first of the language", code: "print(1)", want: "py-a", templates: []core.Template{
			{Name: "py-a", Language: "python"}, {Name: "py-b", Language: "python"}}},
		{name: "warm module of an unclaimed template", code: "import numpy", want: "py-b", templates: []core.Template{
			{Name: "py-a", Language: "python"}, {Name: "py-b", Language: "python", WarmImports: []string{"numpy"}}}},
		{name: "only the slim one", code: "import pandas", want: "python-slim", templates: []core.Template{
			{Name: "python-slim", Language: "python", DefaultFor: []string{"runs"}}}},
		{name: "only the pandas-ready one", code: "print(1)", want: "python", templates: []core.Template{
			{Name: "python", Language: "python", WarmImports: []string{"pandas"}, DefaultFor: []string{"sessions"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, core.Config{Templates: tt.templates})
			plan, err := f.svc.CheckRun(core.Caller{}, core.RunInput{Language: "python", Code: tt.code})
			got := plan.Template()
			if err != nil || got != tt.want {
				t.Errorf("CheckRun = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

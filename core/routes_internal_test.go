package core

import (
	"slices"
	"testing"
)

func TestPythonImports(t *testing.T) {
	tests := []struct {
		name string
		code string
		want []string
	}{
		{name: "no imports", code: "print(1)\n", want: nil},
		{name: "plain", code: "import pandas\n", want: []string{"pandas"}},
		{name: "alias and list", code: "import numpy as np, os.path, json\n", want: []string{"numpy", "os", "json"}},
		{name: "dotted", code: "import matplotlib.pyplot as plt", want: []string{"matplotlib"}},
		{name: "from", code: "from scipy.stats import norm\nfrom os import path\n", want: []string{"scipy", "os"}},
		{name: "relative from", code: "from . import x\nfrom .a import b\n", want: nil},
		{name: "indented", code: "def f():\n    import pandas as pd\n\treturn pd\n", want: []string{"pandas"}},
		{name: "after a semicolon", code: "x = 1; import seaborn\n", want: []string{"seaborn"}},
		{name: "parenthesised from", code: "from pandas import (\n    DataFrame,\n)\n", want: []string{"pandas"}},
		{name: "comment", code: "# import pandas\nprint(1)  # import numpy\n", want: nil},
		{name: "word prefix only", code: "imports = 3\nfromage = 'brie'\nimportlib = None\n", want: nil},
		{name: "from without import", code: "from pandas\n", want: nil},
		{name: "repeated", code: "import pandas\nimport pandas.io\n", want: []string{"pandas"}},
		{name: "crlf", code: "import numpy\r\nprint(1)\r\n", want: []string{"numpy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pythonImports(tt.code); !slices.Equal(got, tt.want) {
				t.Errorf("pythonImports(%q) = %q, want %q", tt.code, got, tt.want)
			}
		})
	}
}

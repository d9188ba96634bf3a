package graphqldoor

import (
	_ "embed"
	"fmt"
	"math"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

//go:embed schema.graphql
var schemaText string

// loadSchema parses schema.graphql with gqlparser's prelude (the built-in
// scalars, directives and introspection types).
func loadSchema() (*ast.Schema, error) {
	s, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: schemaText, BuiltIn: false})
	if err != nil {
		return nil, fmt.Errorf("loading schema.graphql: %w", err)
	}
	return s, nil
}

// introspectionSizes are the cost weights of the introspection lists: how
// many items each holds on average in this schema, rounded up, so that a
// query walking the schema's graph is weighed by what it would produce.
func introspectionSizes(s *ast.Schema) map[string]int {
	var types, fields, args, enums, inputs, withFields, withEnums, withInputs, withArgs int
	for _, d := range s.Types {
		types++
		switch d.Kind {
		case ast.Object, ast.Interface:
			withFields++
			fields += len(d.Fields)
			for _, f := range d.Fields {
				withArgs++
				args += len(f.Arguments)
			}
		case ast.Enum:
			withEnums++
			enums += len(d.EnumValues)
		case ast.InputObject:
			withInputs++
			inputs += len(d.Fields)
		}
	}
	var locations int
	for _, d := range s.Directives {
		locations += len(d.Locations)
		args += len(d.Arguments)
		withArgs++
	}
	avg := func(n, of int) int {
		if of == 0 {
			return 1
		}
		return max(1, int(math.Ceil(float64(n)/float64(of))))
	}
	return map[string]int{
		"__Schema.types":        types,
		"__Schema.directives":   len(s.Directives),
		"__Type.fields":         avg(fields, withFields),
		"__Type.enumValues":     avg(enums, withEnums),
		"__Type.inputFields":    avg(inputs, withInputs),
		"__Type.interfaces":     1,
		"__Type.possibleTypes":  1,
		"__Field.args":          avg(args, withArgs),
		"__Directive.args":      avg(args, withArgs),
		"__Directive.locations": avg(locations, max(1, len(s.Directives))),
	}
}

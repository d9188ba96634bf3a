package graphqldoor

import (
	"context"
	"sort"

	"github.com/vektah/gqlparser/v2/ast"
)

// The introspection types (__Schema, __Type, __Field, __InputValue,
// __EnumValue, __Directive) answered from the loaded schema, as the
// GraphQL spec's introspection section describes them.

// schemaObject is __Schema.
func schemaObject(s *ast.Schema) object {
	return func(_ context.Context, field string, _ map[string]any) (any, error) {
		switch field {
		case "description":
			return nullable(s.Description), nil
		case "types":
			names := make([]string, 0, len(s.Types))
			for n := range s.Types {
				names = append(names, n)
			}
			sort.Strings(names)
			out := make([]any, 0, len(names))
			for _, n := range names {
				out = append(out, namedType(s, s.Types[n]))
			}
			return out, nil
		case "queryType":
			return namedType(s, s.Query), nil
		case "mutationType":
			return optionalType(s, s.Mutation), nil
		case "subscriptionType":
			return optionalType(s, s.Subscription), nil
		case "directives":
			names := make([]string, 0, len(s.Directives))
			for n := range s.Directives {
				names = append(names, n)
			}
			sort.Strings(names)
			out := make([]any, 0, len(names))
			for _, n := range names {
				out = append(out, directiveObject(s, s.Directives[n]))
			}
			return out, nil
		}
		return nil, unknownField("__Schema", field)
	}
}

func optionalType(s *ast.Schema, d *ast.Definition) any {
	if d == nil {
		return nil
	}
	return namedType(s, d)
}

// typeRef is the __Type of a reference: NON_NULL and LIST wrappers around
// a named type.
func typeRef(s *ast.Schema, t *ast.Type) object {
	switch {
	case t.NonNull:
		inner := *t
		inner.NonNull = false
		return wrapperType("NON_NULL", typeRef(s, &inner))
	case t.Elem != nil:
		return wrapperType("LIST", typeRef(s, t.Elem))
	}
	return namedType(s, s.Types[t.NamedType])
}

func wrapperType(kind string, of object) object {
	return func(_ context.Context, field string, _ map[string]any) (any, error) {
		switch field {
		case "kind":
			return kind, nil
		case "ofType":
			return of, nil
		case "name", "description", "fields", "interfaces", "possibleTypes", "enumValues",
			"inputFields", "specifiedByURL", "isOneOf":
			return nil, nil
		}
		return nil, unknownField("__Type", field)
	}
}

// namedType is the __Type of a definition.
func namedType(s *ast.Schema, d *ast.Definition) object {
	return func(_ context.Context, field string, args map[string]any) (any, error) {
		withDeprecated := args["includeDeprecated"] == true
		switch field {
		case "kind":
			return string(d.Kind), nil
		case "name":
			return d.Name, nil
		case "description":
			return nullable(d.Description), nil
		case "specifiedByURL":
			return directiveArg(d.Directives, "specifiedBy", "url"), nil
		case "isOneOf":
			if d.Kind != ast.InputObject {
				return nil, nil
			}
			return d.Directives.ForName("oneOf") != nil, nil
		case "fields":
			if d.Kind != ast.Object && d.Kind != ast.Interface {
				return nil, nil
			}
			out := []any{}
			for _, f := range d.Fields {
				if len(f.Name) > 1 && f.Name[:2] == "__" {
					continue // __schema, __type and __typename are implicit
				}
				if withDeprecated || !deprecated(f.Directives) {
					out = append(out, fieldObject(s, f))
				}
			}
			return out, nil
		case "inputFields":
			if d.Kind != ast.InputObject {
				return nil, nil
			}
			out := []any{}
			for _, f := range d.Fields {
				if withDeprecated || !deprecated(f.Directives) {
					out = append(out, inputValue(s, f.Name, f.Description, f.Type, f.DefaultValue, f.Directives))
				}
			}
			return out, nil
		case "interfaces":
			if d.Kind != ast.Object && d.Kind != ast.Interface {
				return nil, nil
			}
			out := []any{}
			for _, n := range d.Interfaces {
				out = append(out, namedType(s, s.Types[n]))
			}
			return out, nil
		case "possibleTypes":
			if !d.IsAbstractType() {
				return nil, nil
			}
			out := []any{}
			for _, p := range s.GetPossibleTypes(d) {
				out = append(out, namedType(s, p))
			}
			return out, nil
		case "enumValues":
			if d.Kind != ast.Enum {
				return nil, nil
			}
			out := []any{}
			for _, v := range d.EnumValues {
				if withDeprecated || !deprecated(v.Directives) {
					out = append(out, enumValue(v))
				}
			}
			return out, nil
		case "ofType":
			return nil, nil
		}
		return nil, unknownField("__Type", field)
	}
}

func fieldObject(s *ast.Schema, f *ast.FieldDefinition) object {
	return func(_ context.Context, field string, args map[string]any) (any, error) {
		switch field {
		case "name":
			return f.Name, nil
		case "description":
			return nullable(f.Description), nil
		case "args":
			return argList(s, f.Arguments, args["includeDeprecated"] == true), nil
		case "type":
			return typeRef(s, f.Type), nil
		case "isDeprecated":
			return deprecated(f.Directives), nil
		case "deprecationReason":
			return deprecationReason(f.Directives), nil
		}
		return nil, unknownField("__Field", field)
	}
}

func argList(s *ast.Schema, defs ast.ArgumentDefinitionList, withDeprecated bool) []any {
	out := []any{}
	for _, a := range defs {
		if withDeprecated || !deprecated(a.Directives) {
			out = append(out, inputValue(s, a.Name, a.Description, a.Type, a.DefaultValue, a.Directives))
		}
	}
	return out
}

func inputValue(s *ast.Schema, name, description string, t *ast.Type, def *ast.Value, ds ast.DirectiveList) object {
	return func(_ context.Context, field string, _ map[string]any) (any, error) {
		switch field {
		case "name":
			return name, nil
		case "description":
			return nullable(description), nil
		case "type":
			return typeRef(s, t), nil
		case "defaultValue":
			if def == nil {
				return nil, nil
			}
			return def.String(), nil
		case "isDeprecated":
			return deprecated(ds), nil
		case "deprecationReason":
			return deprecationReason(ds), nil
		}
		return nil, unknownField("__InputValue", field)
	}
}

func enumValue(v *ast.EnumValueDefinition) object {
	return func(_ context.Context, field string, _ map[string]any) (any, error) {
		switch field {
		case "name":
			return v.Name, nil
		case "description":
			return nullable(v.Description), nil
		case "isDeprecated":
			return deprecated(v.Directives), nil
		case "deprecationReason":
			return deprecationReason(v.Directives), nil
		}
		return nil, unknownField("__EnumValue", field)
	}
}

func directiveObject(s *ast.Schema, d *ast.DirectiveDefinition) object {
	return func(_ context.Context, field string, args map[string]any) (any, error) {
		switch field {
		case "name":
			return d.Name, nil
		case "description":
			return nullable(d.Description), nil
		case "locations":
			out := make([]any, 0, len(d.Locations))
			for _, l := range d.Locations {
				out = append(out, string(l))
			}
			return out, nil
		case "args":
			return argList(s, d.Arguments, args["includeDeprecated"] == true), nil
		case "isRepeatable":
			return d.IsRepeatable, nil
		}
		return nil, unknownField("__Directive", field)
	}
}

func deprecated(ds ast.DirectiveList) bool { return ds.ForName("deprecated") != nil }

func deprecationReason(ds ast.DirectiveList) any {
	d := ds.ForName("deprecated")
	if d == nil {
		return nil
	}
	if r := directiveArg(ds, "deprecated", "reason"); r != nil {
		return r
	}
	return "No longer supported"
}

// nullable is null for an empty description.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func unknownField(typeName, field string) error {
	return &fieldError{Code: "internal", Message: "no resolver for " + typeName + "." + field}
}

// directiveArg is the literal value of argument arg of directive name in
// ds, or nil.
func directiveArg(ds ast.DirectiveList, name, arg string) any {
	d := ds.ForName(name)
	if d == nil {
		return nil
	}
	if a := d.Arguments.ForName(arg); a != nil && a.Value != nil {
		return a.Value.Raw
	}
	return nil
}

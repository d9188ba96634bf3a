package graphqldoor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// object is a value of a GraphQL object type: it resolves one of its
// fields, by name, with the field's coerced arguments. It returns nil for
// null, a string, bool, int, int64 or float64 for a leaf, an object, or a
// []any of those for a list.
type object func(ctx context.Context, field string, args map[string]any) (any, error)

// fieldError is what a resolver returns for an error with a code (the
// core's, or the door's): it becomes a GraphQL error whose
// extensions.code is Code.
type fieldError struct {
	Code    string
	Message string
}

func (e *fieldError) Error() string { return e.Message }

// ordered is a response object: its keys in the order the query selected
// them, as the spec asks.
type ordered struct {
	keys []string
	vals []any
}

func (o *ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// execution runs one operation of a validated document.
type execution struct {
	ctx  context.Context
	vars map[string]any
	errs gqlerror.List
	code func(error) (code, message string)
}

// run executes op's selection set on root and returns the data (nil when
// a non-null root field was null).
func (e *execution) run(root object, op *ast.OperationDefinition) any {
	m, ok := e.selectionSet(root, "Query", []ast.SelectionSet{op.SelectionSet}, nil)
	if !ok {
		return nil
	}
	return m
}

// collect groups the fields of sets that apply to an object of typeName
// by response key, in order, expanding fragments and honouring @skip and
// @include.
func (e *execution) collect(typeName string, sets []ast.SelectionSet) ([]string, map[string][]*ast.Field) {
	var keys []string
	groups := map[string][]*ast.Field{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				if !e.included(s.Directives) {
					continue
				}
				key := s.Alias
				if key == "" {
					key = s.Name
				}
				if _, seen := groups[key]; !seen {
					keys = append(keys, key)
				}
				groups[key] = append(groups[key], s)
			case *ast.InlineFragment:
				if e.included(s.Directives) && (s.TypeCondition == "" || s.TypeCondition == typeName) {
					walk(s.SelectionSet)
				}
			case *ast.FragmentSpread:
				if e.included(s.Directives) && s.Definition != nil && s.Definition.TypeCondition == typeName {
					walk(s.Definition.SelectionSet)
				}
			}
		}
	}
	for _, set := range sets {
		walk(set)
	}
	return keys, groups
}

// included applies @skip(if:) and @include(if:).
func (e *execution) included(ds ast.DirectiveList) bool {
	if d := ds.ForName("skip"); d != nil && d.ArgumentMap(e.vars)["if"] == true {
		return false
	}
	if d := ds.ForName("include"); d != nil && d.ArgumentMap(e.vars)["if"] != true {
		return false
	}
	return true
}

// selectionSet resolves the selected fields of obj. ok is false when a
// non-null field came out null: the object itself is then null.
func (e *execution) selectionSet(obj object, typeName string, sets []ast.SelectionSet, path ast.Path) (*ordered, bool) {
	keys, groups := e.collect(typeName, sets)
	out := &ordered{keys: keys, vals: make([]any, len(keys))}
	for i, key := range keys {
		fields := groups[key]
		f := fields[0]
		fpath := append(append(ast.Path(nil), path...), ast.PathName(key))
		if f.Name == "__typename" {
			out.vals[i] = typeName
			continue
		}
		if err := e.ctx.Err(); err != nil {
			e.fail(fpath, f, err)
			return nil, false
		}
		v, err := obj(e.ctx, f.Name, f.ArgumentMap(e.vars))
		if err != nil {
			e.fail(fpath, f, err)
			if f.Definition.Type.NonNull {
				return nil, false
			}
			continue
		}
		val, ok := e.complete(f.Definition.Type, v, fields, fpath)
		if !ok {
			return nil, false
		}
		out.vals[i] = val
	}
	return out, true
}

// complete shapes a resolved value by its type: ok is false when t is
// non-null and the value is null, so that the null goes up a level.
func (e *execution) complete(t *ast.Type, v any, fields []*ast.Field, path ast.Path) (any, bool) {
	if v == nil {
		return nil, !t.NonNull
	}
	if t.Elem != nil {
		items, isList := v.([]any)
		if !isList {
			e.fail(path, fields[0], fmt.Errorf("internal: %s resolved to %T, not a list", t, v))
			return nil, !t.NonNull
		}
		out := make([]any, len(items))
		for i, item := range items {
			val, ok := e.complete(t.Elem, item, fields, append(append(ast.Path(nil), path...), ast.PathIndex(i)))
			if !ok {
				return nil, !t.NonNull
			}
			out[i] = val
		}
		return out, true
	}
	obj, isObject := v.(object)
	if !isObject {
		return v, true // a leaf: the resolvers return the scalar's JSON value
	}
	sets := make([]ast.SelectionSet, 0, len(fields))
	for _, f := range fields {
		sets = append(sets, f.SelectionSet)
	}
	m, ok := e.selectionSet(obj, t.NamedType, sets, path)
	if !ok {
		return nil, !t.NonNull
	}
	return m, true
}

// fail records a field's error at its path and position.
func (e *execution) fail(path ast.Path, f *ast.Field, err error) {
	code, msg := e.code(err)
	ge := &gqlerror.Error{Message: msg, Path: path, Extensions: map[string]any{"code": code}}
	if f.Position != nil {
		ge.Locations = []gqlerror.Location{{Line: f.Position.Line, Column: f.Position.Column}}
	}
	e.errs = append(e.errs, ge)
}

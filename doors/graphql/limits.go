package graphqldoor

import (
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
)

// Limits bound what one document may ask of the server; every refusal is
// a GraphQL error whose extensions.code names the limit.
type Limits struct {
	// MaxQueryBytes bounds the document's text (query_too_large).
	MaxQueryBytes int
	// MaxDepth bounds how deeply fields nest, fragments expanded
	// (depth_limit). The introspection query graphql-js sends is 15 deep.
	MaxDepth int
	// MaxBreadth bounds the fields of one selection set, aliases and
	// fragments included (breadth_limit).
	MaxBreadth int
	// MaxSelections bounds the selections written in the document, its
	// fragments' counted once (breadth_limit).
	MaxSelections int
	// MaxCost bounds the estimated cost: every field counts the product of
	// the sizes of the lists above it (a page's first, the number of
	// templates, the introspection lists' average sizes) (cost_limit).
	MaxCost int
}

// DefaultLimits admit the full introspection query and a few pages of
// 500 runs, and refuse more.
var DefaultLimits = Limits{MaxQueryBytes: 32 << 10, MaxDepth: 16, MaxBreadth: 100, MaxSelections: 500, MaxCost: 50000}

// limitError is a document refused by a limit.
type limitError struct {
	code, msg string
}

func (e *limitError) Error() string { return e.msg }

// weigher measures one operation against the limits. lists weighs the
// list fields ("Type.field") whose size is not an argument.
type weigher struct {
	lim   Limits
	vars  map[string]any
	lists map[string]int
	cost  int
}

// check walks op with its fragments expanded; the walk stops at the first
// limit crossed, so a fragment bomb costs no more than the budget to
// refuse.
func (w *weigher) check(op *ast.OperationDefinition) error {
	return w.set(op.SelectionSet, 1, 1)
}

func (w *weigher) set(set ast.SelectionSet, depth, mult int) error {
	n := 0
	var walk func(ast.SelectionSet) error
	walk = func(set ast.SelectionSet) error {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				n++
				if n > w.lim.MaxBreadth {
					return &limitError{"breadth_limit", fmt.Sprintf("a selection set selects more than %d fields (the breadth limit)", w.lim.MaxBreadth)}
				}
				if err := w.field(s, depth, mult); err != nil {
					return err
				}
			case *ast.InlineFragment:
				if err := walk(s.SelectionSet); err != nil {
					return err
				}
			case *ast.FragmentSpread:
				if s.Definition != nil {
					if err := walk(s.Definition.SelectionSet); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return walk(set)
}

func (w *weigher) field(f *ast.Field, depth, mult int) error {
	if depth > w.lim.MaxDepth {
		return &limitError{"depth_limit", fmt.Sprintf("fields nest more than %d deep (the depth limit)", w.lim.MaxDepth)}
	}
	w.cost += mult
	if w.cost > w.lim.MaxCost {
		return &limitError{"cost_limit", fmt.Sprintf("the query's estimated cost is over %d (the cost limit): ask for smaller pages (first) or fewer fields", w.lim.MaxCost)}
	}
	if len(f.SelectionSet) == 0 {
		return nil
	}
	return w.set(f.SelectionSet, depth+1, satMul(mult, w.size(f)))
}

// size is how many items a field's value holds at most, for the cost: a
// page's first, a list's weight, else 1.
func (w *weigher) size(f *ast.Field) int {
	if f.Definition == nil || f.ObjectDefinition == nil {
		return 1
	}
	if f.ObjectDefinition.Name == "RunConnection" || f.ObjectDefinition.Name == "SessionEventConnection" {
		return 1 // items inherits the page size its connection field set
	}
	if f.Definition.Arguments.ForName("first") != nil {
		if n, ok := toInt(f.ArgumentMap(w.vars)["first"]); ok && n > 1 {
			return int(min(n, 1<<30))
		}
		return 1
	}
	if n, ok := w.lists[f.ObjectDefinition.Name+"."+f.Name]; ok {
		return n
	}
	return 1
}

func satMul(a, b int) int {
	if b != 0 && a > (1<<40)/b {
		return 1 << 40
	}
	return a * b
}

// shape checks a parsed document as written, before validation: no
// selection set over MaxBreadth selections, no more than MaxSelections
// in all. The expanded document is weighed after validation (check).
func (l Limits) shape(doc *ast.QueryDocument) *limitError {
	total := 0
	var walk func(ast.SelectionSet) *limitError
	walk = func(set ast.SelectionSet) *limitError {
		if len(set) > l.MaxBreadth {
			return &limitError{"breadth_limit", fmt.Sprintf("a selection set selects more than %d fields (the breadth limit)", l.MaxBreadth)}
		}
		total += len(set)
		if total > l.MaxSelections {
			return &limitError{"breadth_limit", fmt.Sprintf("the document selects more than %d fields in all (the breadth limit)", l.MaxSelections)}
		}
		for _, sel := range set {
			var sub ast.SelectionSet
			switch s := sel.(type) {
			case *ast.Field:
				sub = s.SelectionSet
			case *ast.InlineFragment:
				sub = s.SelectionSet
			}
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	for _, op := range doc.Operations {
		if err := walk(op.SelectionSet); err != nil {
			return err
		}
	}
	for _, f := range doc.Fragments {
		if err := walk(f.SelectionSet); err != nil {
			return err
		}
	}
	return nil
}

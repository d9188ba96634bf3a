package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// checkDuplicateKeys refuses a body in which one object names a key twice,
// at any depth. encoding/json silently keeps the last value, so a proxy or
// logger that reads the first one would see a different request than the
// sandbox runs. In objects decoded into a struct, two spellings of one
// field ("code" and "Code": encoding/json matches field names without
// regard to case) count as the same key. t is the type body was decoded
// into; body has already been decoded without error, which bounds its
// size and depth.
func checkDuplicateKeys(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers are not looked at; this never fails on 1e400
	var stack []*keyFrame
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end (anything malformed was refused earlier)
		}
		var top *keyFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return nil // only the first value counts; decodeJSON refused the rest
			}
			continue
		}
		if top != nil && top.object && top.wantKey {
			key, _ := tok.(string) // Token yields an object's keys as strings
			if first, dup := top.add(key); dup {
				return duplicateKeyError(stack[:len(stack)-1], key, first)
			}
			top.wantKey = false
			continue
		}
		// A value: of the key just read, of an array, or the whole body.
		valueType := t
		if top != nil {
			valueType = top.valueType
			if top.object {
				top.wantKey = true
			} else {
				top.index++
			}
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, newKeyFrame(d == '{', valueType))
		}
	}
}

// duplicateKeyError words a repeat of key (first spelled first) in the
// object that outer encloses.
func duplicateKeyError(outer []*keyFrame, key, first string) error {
	where := ""
	if len(outer) > 0 {
		where = " in " + jsonPath(outer)
	}
	if first != key {
		return invalid("duplicate_key", "duplicate key %q%s (the same field as %q): each key may appear once per object", key, where, first)
	}
	return invalid("duplicate_key", "duplicate key %q%s: each key may appear once per object", key, where)
}

// maxPathParts bounds the path in a message about a deeply nested key.
const maxPathParts = 8

// jsonPath names where the open frames stand, e.g. files[1] or env.
func jsonPath(frames []*keyFrame) string {
	var b strings.Builder
	if len(frames) > maxPathParts {
		b.WriteString("…")
		frames = frames[len(frames)-maxPathParts:]
	}
	for _, f := range frames {
		switch {
		case !f.object:
			fmt.Fprintf(&b, "[%d]", f.index)
		case isIdentifier(f.key) && b.Len() > 0:
			b.WriteString("." + f.key)
		case isIdentifier(f.key):
			b.WriteString(f.key)
		default:
			fmt.Fprintf(&b, "[%q]", f.key)
		}
	}
	return b.String()
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// keyFrame is one open object or array of checkDuplicateKeys' walk.
type keyFrame struct {
	object  bool
	wantKey bool
	t       reflect.Type // what this object or array decodes into; nil if unknown
	// seen maps each key (for a struct: the field's own name) to its first
	// spelling.
	seen map[string]string
	// key is an object's last key; index is an array's current element.
	key   string
	index int
	// valueType is the type of the value being read: an array's element,
	// or the field or map value named by the last key.
	valueType reflect.Type
}

func newKeyFrame(object bool, t reflect.Type) *keyFrame {
	t = deref(t)
	f := &keyFrame{object: object, wantKey: object, t: t, index: -1}
	if !object && t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		f.valueType = t.Elem()
	}
	return f
}

// add records key and reports whether the object already has it, and
// under which spelling.
func (f *keyFrame) add(key string) (first string, dup bool) {
	id := key
	f.key, f.valueType = key, nil
	if f.t != nil {
		switch f.t.Kind() {
		case reflect.Struct:
			if field, ok := fieldFor(f.t, key); ok {
				id = jsonName(field)
				f.valueType = field.Type
			}
		case reflect.Map:
			f.valueType = f.t.Elem()
		}
	}
	if first, dup := f.seen[id]; dup {
		return first, true
	}
	if f.seen == nil {
		f.seen = make(map[string]string)
	}
	f.seen[id] = key
	return "", false
}

// fieldFor finds the field of struct t that encoding/json fills from key:
// the exact name first, else one equal under case folding.
func fieldFor(t reflect.Type, key string) (reflect.StructField, bool) {
	var folded reflect.StructField
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("json") == "-" {
			continue
		}
		switch name := jsonName(f); {
		case name == key:
			return f, true
		case !found && strings.EqualFold(name, key):
			folded, found = f, true
		}
	}
	return folded, found
}

// jsonName is the key encoding/json uses for f.
func jsonName(f reflect.StructField) string {
	if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" {
		return name
	}
	return f.Name
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

package templates

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
)

//go:embed *.json
var builtin embed.FS

// All returns the built-in templates, validated and sorted by name.
func All() ([]Template, error) {
	return Load(builtin)
}

// Get returns the built-in template called name, or ErrUnknown.
func Get(name string) (Template, error) {
	all, err := All()
	if err != nil {
		return Template{}, err
	}
	for _, t := range all {
		if t.Name == name {
			return t, nil
		}
	}
	return Template{}, fmt.Errorf("%w: %q", ErrUnknown, name)
}

// Load reads every *.json file at the top of fsys as a template, validates
// each one and returns them sorted by name. A file's name must be its
// template's name plus ".json"; unknown fields are errors.
func Load(fsys fs.FS) ([]Template, error) {
	files, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, fmt.Errorf("listing templates: %w", err)
	}
	var (
		all  []Template
		errs []error
	)
	for _, file := range files {
		t, err := parseFile(fsys, file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, t)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b Template) int { return strings.Compare(a.Name, b.Name) })
	if err := CheckSet(all); err != nil {
		return nil, err
	}
	return all, nil
}

// CheckSet reports what is wrong with templates served together: two
// claiming the same default of one language, and two sharing a root
// filesystem (one Key) with different version commands, as the image
// records the versions of whichever template built it.
func CheckSet(all []Template) error {
	var errs []error
	claimed := map[[2]string]string{} // language, default → template
	byKey := map[string]Template{}
	for _, t := range all {
		for _, d := range t.DefaultFor {
			if other, ok := claimed[[2]string{t.Language, d}]; ok {
				errs = append(errs, fmt.Errorf("%w: templates %q and %q are both the default for %s of %s", ErrInvalid, other, t.Name, d, t.Language))
				continue
			}
			claimed[[2]string{t.Language, d}] = t.Name
		}
		other, ok := byKey[t.Key()]
		if !ok {
			byKey[t.Key()] = t
			continue
		}
		if !maps.EqualFunc(other.VersionCommands, t.VersionCommands, slices.Equal) {
			errs = append(errs, fmt.Errorf("%w: templates %q and %q share a root filesystem but not its version commands", ErrInvalid, other.Name, t.Name))
		}
	}
	return errors.Join(errs...)
}

func parseFile(fsys fs.FS, file string) (Template, error) {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return Template{}, fmt.Errorf("reading template %s: %w", file, err)
	}
	t, err := Parse(data)
	if err != nil {
		return Template{}, fmt.Errorf("template file %s: %w", file, err)
	}
	if want := strings.TrimSuffix(path.Base(file), ".json"); t.Name != want {
		return Template{}, fmt.Errorf("%w: template file %s holds template %q", ErrInvalid, file, t.Name)
	}
	return t, nil
}

// Parse decodes one template from JSON and validates it.
func Parse(data []byte) (Template, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var t Template
	if err := dec.Decode(&t); err != nil {
		return Template{}, fmt.Errorf("%w: decoding: %w", ErrInvalid, err)
	}
	if dec.More() {
		return Template{}, fmt.Errorf("%w: trailing data after the template", ErrInvalid)
	}
	if err := t.Validate(); err != nil {
		return Template{}, err
	}
	return t, nil
}

// OnSuite returns t built from the Debian suite in place of its own, which
// changes its Key; "" keeps its own.
func (t Template) OnSuite(suite string) (Template, error) {
	if suite == "" {
		return t, nil
	}
	t.Suite = suite
	if err := t.Validate(); err != nil {
		return Template{}, err
	}
	return t, nil
}

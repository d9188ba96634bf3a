package policy

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrOutOfRange is wrapped by every error of this package.
var ErrOutOfRange = errors.New("value out of range")

// rangeError is a refused value; its message is shown to the client as is.
type rangeError struct{ msg string }

func (e *rangeError) Error() string        { return e.msg }
func (e *rangeError) Is(target error) bool { return target == ErrOutOfRange }

func refuse(format string, args ...any) error {
	return &rangeError{msg: fmt.Sprintf(format, args...)}
}

// Optional checks a field whose zero means the default: v must be 0 or
// within [1, hi]. def is the default, named in the message; a negative def
// is left out of it.
func Optional(field string, v, hi, def int64) error {
	if v >= 0 && v <= hi {
		return nil
	}
	if def < 0 {
		return refuse("%s must be between 1 and %d, or 0 for the default; got %d", field, hi, v)
	}
	return refuse("%s must be between 1 and %d, or 0 for the default (%d); got %d", field, hi, def, v)
}

// OptionalDuration is Optional for a duration given as such: d must be 0
// (the default def) or within [least, hi].
func OptionalDuration(field string, d, least, hi, def time.Duration) error {
	if d == 0 || (d >= least && d <= hi) {
		return nil
	}
	return refuse("%s must be between %s and %s, or 0 for the default (%s); got %s", field, least, hi, def, d)
}

// Within checks a field that has no default against [lo, hi]; unit
// completes the range in the message, e.g. " (MiB)".
func Within(field string, v, lo, hi int64, unit string) error {
	if v >= lo && v <= hi {
		return nil
	}
	return refuse("%s must be between %d and %d%s; got %d", field, lo, hi, unit, v)
}

// WithinFloat is Within for a fractional field.
func WithinFloat(field string, v, lo, hi float64, unit string) error {
	if v >= lo && v <= hi {
		return nil
	}
	return refuse("%s must be between %s and %s%s; got %s", field, num(lo), num(hi), unit, num(v))
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

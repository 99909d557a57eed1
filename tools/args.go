package tools

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// argError is a result that names the argument at fault.
type argError struct{ res Result }

func missing(tool, name string) *argError {
	return &argError{errResult("%s: missing required argument %q.", tool, name)}
}

// stringArg returns the string argument name. A missing optional argument
// is "", false.
func stringArg(args map[string]json.RawMessage, tool, name string, required bool) (string, bool, *argError) {
	raw, ok := args[name]
	if !ok || string(raw) == "null" {
		if required {
			return "", false, missing(tool, name)
		}
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, &argError{errResult("%s: argument %q must be a string.", tool, name)}
	}
	return s, true, nil
}

// intArg returns the optional positive integer argument name, or 0. Models
// now and then send "5" or 5.0 for 5; those are taken as meant.
func intArg(args map[string]json.RawMessage, tool, name string) (int, *argError) {
	raw, ok := args[name]
	if !ok || string(raw) == "null" {
		return 0, nil
	}
	bad := &argError{errResult("%s: argument %q must be a positive whole number.", tool, name)}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, bad
		}
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0, bad
		}
	}
	if f < 1 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, bad
	}
	return int(f), nil
}

// Visible makes control characters and escape sequences in s visible, so
// that text shown on a terminal for approval cannot rewrite what the user
// sees: an ESC becomes \x1b, a carriage return \r. Newlines and tabs stay.
func Visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffd ||
			r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069'):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

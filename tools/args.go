package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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

// visible returns s as it may be shown on a terminal for approval: every
// control character, escape sequence, invisible or direction-changing
// character, and byte that is not UTF-8 is written as a Go-style escape
// (\x1b, \r, \u202e), so a command cannot disguise itself. Newlines stay
// real newlines so that a multi-line script reads naturally, and a
// backslash stays a backslash: the escapes are for reading, not for
// pasting back.
func visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hidden reports characters that print nothing or reorder what follows:
// bidirectional controls, zero-width characters and other format
// characters, and line or paragraph separators.
func hidden(r rune) bool {
	return unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 || !unicode.IsPrint(r) && r != ' '
}

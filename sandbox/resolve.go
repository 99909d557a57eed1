package sandbox

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"
)

// Comparison says how two path names are compared.
type Comparison int

const (
	// Ordinal compares names byte for byte, as Linux file systems do.
	Ordinal Comparison = iota
	// IgnoreCase compares names case-insensitively, as the default file
	// systems of Windows and macOS do. Without it, "REPO/../secret" could
	// pass a check that "repo/../secret" fails, while naming the same file.
	IgnoreCase
)

// HostComparison is the comparison for the file systems of this platform.
var HostComparison = hostComparison()

func hostComparison() Comparison {
	switch runtime.GOOS {
	case "windows", "darwin", "ios":
		return IgnoreCase
	}
	return Ordinal
}

// RefusedError is returned for a path that names something outside the
// workspace root, or that no file system could represent.
type RefusedError struct {
	Path string // the path as it was given
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("Refused: '%s' resolves outside the workspace root.", e.Path)
}

// TryResolve resolves candidate, an absolute path or one relative to root,
// and reports whether it lies inside root. root must be absolute and clean.
// The returned rel is relative to root, in the platform's separators, and is
// "." for the root itself.
//
// The check is lexical: ".." is collapsed before comparing, and a match needs
// a separator boundary, so that "/srv/repo-secrets" is not inside
// "/srv/repo". Symlinks are not followed here; that is the job of the
// os.Root that every operation goes through afterwards.
//
// Blank and whitespace-only paths are refused, and so are paths that no file
// system can represent faithfully: a NUL byte, or bytes that are not UTF-8.
func TryResolve(root, candidate string, cmp Comparison) (rel string, ok bool) {
	if strings.TrimSpace(candidate) == "" ||
		strings.IndexByte(candidate, 0) >= 0 ||
		!utf8.ValidString(candidate) ||
		!representable(candidate) {
		return "", false
	}
	var abs string
	if filepath.IsAbs(candidate) {
		abs = filepath.Clean(candidate)
	} else {
		if filepath.VolumeName(candidate) != "" || strings.HasPrefix(candidate, `\`) && runtime.GOOS == "windows" {
			// "C:x" and "\x" are relative to another drive or to the
			// current drive's root, never to the workspace.
			return "", false
		}
		abs = filepath.Join(root, candidate)
	}
	root = filepath.Clean(root)
	if equal(abs, root, cmp) {
		return ".", true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if len(abs) <= len(prefix) || !equal(abs[:len(prefix)], prefix, cmp) {
		return "", false
	}
	return abs[len(prefix):], true
}

func equal(a, b string, cmp Comparison) bool {
	if cmp == IgnoreCase {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// representable refuses names that Windows would reinterpret: ':' after the
// volume opens an alternate data stream, and the others are invalid there.
func representable(p string) bool {
	if runtime.GOOS != "windows" {
		return true
	}
	return !strings.ContainsAny(p[len(filepath.VolumeName(p)):], `<>:"|?*`)
}

// Display returns rel as shown to the model and the user: relative to the
// root, with forward slashes, "." for the root itself.
func Display(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.ToSlash(rel)
}

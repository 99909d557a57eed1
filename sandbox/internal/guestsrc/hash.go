// Package guestsrc fingerprints the guest's sources, so that a test can tell
// when they changed without the embedded module being generated again.
// Hashing the sources, not the module, keeps the check independent of the
// exact toolchain that built it.
package guestsrc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Dirs are the guest's source directories, relative to the sandbox package.
var Dirs = []string{"internal/guest", "internal/fileops"}

// Hash returns the fingerprint of the guest's non-test Go sources below
// sandboxDir.
func Hash(sandboxDir string) (string, error) {
	var files []string
	for _, d := range Dirs {
		matches, err := filepath.Glob(filepath.Join(sandboxDir, d, "*.go"))
		if err != nil {
			return "", err
		}
		for _, m := range matches {
			if !strings.HasSuffix(m, "_test.go") {
				files = append(files, m)
			}
		}
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(sandboxDir, f)
		// Line endings may change on checkout; the code does not.
		b = []byte(strings.ReplaceAll(string(b), "\r\n", "\n"))
		fmt.Fprintf(h, "%s\n%d\n", filepath.ToSlash(rel), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Package escapes builds the escape corpus: a workspace laid out to tempt
// every kind of path escape, and the paths that try them. The sandbox and
// the tools test their layers against it, each on its own and together.
package escapes

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Secret is the contents of every file outside the workspace.
const Secret = "SECRET-outside-the-workspace"

// A Fixture is a directory holding the workspace "repo", a directory
// "outside", and a sibling "repo-secrets" that shares the root's prefix.
type Fixture struct {
	Base    string // holds all three
	Root    string // the workspace
	Outside string
	Sibling string
}

// New lays out the fixture in a fresh temporary directory.
func New(t testing.TB) *Fixture {
	t.Helper()
	base := t.TempDir()
	// The workspace must be named by its real path, or the corpus would
	// test the temporary directory's own symlinks (macOS) as well.
	base, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	f := &Fixture{
		Base:    base,
		Root:    filepath.Join(base, "repo"),
		Outside: filepath.Join(base, "outside"),
		Sibling: filepath.Join(base, "repo-secrets"),
	}
	for _, d := range []string{f.Root, f.Outside, f.Sibling, filepath.Join(f.Root, "sub"), filepath.Join(f.Outside, "dir")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	for _, p := range []string{
		filepath.Join(f.Outside, "secret.txt"),
		filepath.Join(f.Outside, "dir", "secret.txt"),
		filepath.Join(f.Sibling, "secret.txt"),
	} {
		must(t, os.WriteFile(p, []byte(Secret+"\n"), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(f.Root, "a.txt"), []byte("inside\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.Root, "sub", "b.txt"), []byte("inside too\n"), 0o644))
	if runtime.GOOS == "windows" {
		return f // creating symlinks needs a privilege there
	}
	links := map[string]string{
		"abs_file":     filepath.Join(f.Outside, "secret.txt"),
		"rel_file":     "../outside/secret.txt",
		"abs_dir":      f.Outside,
		"rel_dir":      "../outside",
		"dangling_abs": filepath.Join(f.Outside, "created-abs.txt"),
		"dangling_rel": "../outside/created-rel.txt",
		"dangling_dir": "../outside/newdir",
		"chain1":       "chain2",
		"chain2":       "chain3",
		"chain3":       "../outside/secret.txt",
		"sub/up":       "../..",
		"sibling":      "../repo-secrets",
		"loop1":        "loop2",
		"loop2":        "loop1",
		"in_file":      "a.txt",
		"in_dir":       "sub",
		"in_chain":     "in_file",
	}
	for name, dst := range links {
		must(t, os.Symlink(dst, filepath.Join(f.Root, filepath.FromSlash(name))))
	}
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Lexical are escapes that TryResolve alone must refuse, as the model
// would send them.
func (f *Fixture) Lexical() []string {
	return []string{
		"..",
		"../outside/secret.txt",
		"../../../../../../../../etc/passwd",
		"sub/../../outside/secret.txt",
		"./../outside/secret.txt",
		filepath.Join(f.Outside, "secret.txt"),
		f.Outside,
		"../repo-secrets/secret.txt",
		f.Sibling,
		filepath.Join(f.Sibling, "secret.txt"),
		f.Root + "-secrets/secret.txt",
		filepath.Join(f.Root, "..", "outside", "secret.txt"),
		"a.txt\x00../../outside/secret.txt",
		"",
		"   ",
		"\t\n",
		strings.Repeat("../", 3000) + "etc/passwd",
		"/",
	}
}

// Links are escapes through symlinks: lexically inside, so only the layers
// below TryResolve can refuse them.
func (f *Fixture) Links() []string {
	if runtime.GOOS == "windows" {
		return nil
	}
	return []string{
		"abs_file", "rel_file", "abs_dir/secret.txt", "rel_dir/secret.txt", "rel_dir/dir/secret.txt",
		"dangling_abs", "dangling_rel", "dangling_dir/x.txt", "chain1", "sub/up/outside/secret.txt",
		"sibling/secret.txt", "abs_dir/dir", "rel_dir", "abs_dir", "loop1",
		// ".." after a symlinked directory: lexically it collapses to a
		// path inside; followed on the host it would lead out.
		"rel_dir/../outside/secret.txt",
		"abs_dir/../repo-secrets/secret.txt",
	}
}

// Long returns a path inside the workspace too long for any file system.
func Long() string {
	return strings.Repeat("long-directory-name/", 400) + "f.txt"
}

// Snapshot fingerprints everything outside the workspace: the names, kinds,
// modes and contents of all files below Base but not below Root.
func (f *Fixture) Snapshot(t testing.TB) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(f.Base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == f.Root {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := p + " " + info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

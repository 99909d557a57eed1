package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
)

// A Workspace is the directory tree that corral may touch: its absolute root
// and an os.Root opened on it once, at start-up.
type Workspace struct {
	dir  string
	root *os.Root
	cmp  Comparison
}

// OpenWorkspace opens dir, which must be an existing directory, as a
// workspace.
func OpenWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return &Workspace{dir: abs, root: root, cmp: HostComparison}, nil
}

// Dir returns the workspace's absolute root directory.
func (w *Workspace) Dir() string { return w.dir }

// Root returns the os.Root through which every file operation must go.
func (w *Workspace) Root() *os.Root { return w.root }

// Resolve is TryResolve against this workspace. It returns the path relative
// to the root, or a *RefusedError.
func (w *Workspace) Resolve(path string) (rel string, err error) {
	rel, ok := TryResolve(w.dir, path, w.cmp)
	if !ok {
		return "", &RefusedError{Path: path}
	}
	return rel, nil
}

// Close closes the workspace's os.Root.
func (w *Workspace) Close() error { return w.root.Close() }

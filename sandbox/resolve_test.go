package sandbox

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestTryResolve(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the table is written in Unix paths")
	}
	const root = "/srv/repo"
	long := strings.Repeat("../", 2000) + "etc/passwd"
	tests := []struct {
		path string
		cmp  Comparison
		rel  string // "" means refused
	}{
		{"a.txt", Ordinal, "a.txt"},
		{".", Ordinal, "."},
		{"./", Ordinal, "."},
		{"/srv/repo", Ordinal, "."},
		{"/srv/repo/", Ordinal, "."},
		{"/srv/repo/a/../b", Ordinal, "b"},
		{"a/./b//c", Ordinal, "a/b/c"},
		{"a/../../repo/x", Ordinal, "x"},
		{"sub/..", Ordinal, "."},
		{" a.txt", Ordinal, " a.txt"},
		{"..", Ordinal, ""},
		{"../", Ordinal, ""},
		{"a/../..", Ordinal, ""},
		{"../repo-secrets/x", Ordinal, ""},
		{"/srv/repo-secrets", Ordinal, ""},
		{"/srv/repo-secrets/x", Ordinal, ""},
		{"/srv/repo/../repo-secrets/x", Ordinal, ""},
		{"/srv/rep", Ordinal, ""},
		{"/srv", Ordinal, ""},
		{"/", Ordinal, ""},
		{"/etc/passwd", Ordinal, ""},
		{long, Ordinal, ""},
		{"", Ordinal, ""},
		{" ", Ordinal, ""},
		{"\t\n ", Ordinal, ""},
		{"a\x00b", Ordinal, ""},
		{"a.txt\x00", Ordinal, ""},
		{"\xff\xfe", Ordinal, ""},
		// Case: the same names, compared as Windows and macOS do.
		{"/SRV/REPO/x", Ordinal, ""},
		{"/SRV/REPO/x", IgnoreCase, "x"},
		{"/Srv/Repo", IgnoreCase, "."},
		{"../REPO/x", Ordinal, ""},
		{"../REPO/x", IgnoreCase, "x"},
		{"/srv/Repo-Secrets/x", IgnoreCase, ""},
		{"../REPO-secrets", IgnoreCase, ""},
		{"/SRV/REPO/../secret", IgnoreCase, ""},
	}
	for _, tt := range tests {
		rel, ok := TryResolve(root, tt.path, tt.cmp)
		if tt.rel == "" {
			if ok {
				t.Errorf("TryResolve(%q, %v) = %q, want refused", tt.path, tt.cmp, rel)
			}
			continue
		}
		if !ok || rel != tt.rel {
			t.Errorf("TryResolve(%q, %v) = %q, %v; want %q", tt.path, tt.cmp, rel, ok, tt.rel)
		}
	}
}

func TestTryResolveRootIsFilesystemRoot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	for path, want := range map[string]string{"/etc": "etc", "..": ".", "/": "."} {
		if rel, ok := TryResolve("/", path, Ordinal); !ok || rel != want {
			t.Errorf("TryResolve(/, %q) = %q, %v; want %q", path, rel, ok, want)
		}
	}
}

func TestRefusedMessage(t *testing.T) {
	ws := &Workspace{dir: filepath.FromSlash("/srv/repo"), cmp: Ordinal}
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	_, err := ws.Resolve("../secret")
	want := "Refused: '../secret' resolves outside the workspace root."
	if err == nil || err.Error() != want {
		t.Fatalf("Resolve error = %v, want %q", err, want)
	}
}

func TestDisplay(t *testing.T) {
	for rel, want := range map[string]string{"": ".", ".": ".", "a": "a", filepath.Join("a", "b"): "a/b"} {
		if got := Display(rel); got != want {
			t.Errorf("Display(%q) = %q, want %q", rel, got, want)
		}
	}
}

// FuzzTryResolve checks that whatever TryResolve accepts lies inside the
// root: a clean relative path that never climbs out.
func FuzzTryResolve(f *testing.F) {
	if runtime.GOOS == "windows" {
		f.Skip("Unix paths")
	}
	for _, seed := range []string{"a", "..", "../repo-x", "/srv/repo/..", "/srv/repo-secrets", "a/../../b",
		"/SRV/repo", "\x00", " ", "./././..", "a//b/../../..", "/srv/repo/\xff", "ſ", "/srv/repoſ"} {
		f.Add(seed)
	}
	const root = "/srv/repo"
	f.Fuzz(func(t *testing.T, path string) {
		for _, cmp := range []Comparison{Ordinal, IgnoreCase} {
			rel, ok := TryResolve(root, path, cmp)
			if !ok {
				continue
			}
			if rel == "." {
				continue
			}
			if filepath.IsAbs(rel) || filepath.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
				t.Fatalf("TryResolve(%q, %v) = %q: not a clean path below the root", path, cmp, rel)
			}
			if strings.IndexByte(rel, 0) >= 0 {
				t.Fatalf("TryResolve(%q, %v) = %q: NUL byte accepted", path, cmp, rel)
			}
			joined := filepath.Join(root, rel)
			if !strings.HasPrefix(joined, root+"/") {
				t.Fatalf("TryResolve(%q, %v) = %q, which joins to %q outside %q", path, cmp, rel, joined, root)
			}
		}
	})
}

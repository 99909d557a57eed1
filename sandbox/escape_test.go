package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"corral/internal/escapes"
)

func newGuest(t testing.TB, dir string) (*Workspace, *Guest) {
	t.Helper()
	ws, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := NewGuest(ws, CacheDir())
	t.Cleanup(func() {
		g.Close()
		ws.Close()
	})
	return ws, g
}

// Layer 1 on its own: every lexical escape is refused, and symlinks, which
// it cannot see, are passed on for the layers below.
func TestLayer1RefusesLexicalEscapes(t *testing.T) {
	f := escapes.New(t)
	ws, err := OpenWorkspace(f.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, p := range f.Lexical() {
		if rel, err := ws.Resolve(p); err == nil {
			t.Errorf("Resolve(%q) = %q, want refused", p, rel)
		} else if want := "Refused: '" + p + "' resolves outside the workspace root."; err.Error() != want {
			t.Errorf("Resolve(%q) error = %q, want %q", p, err, want)
		}
	}
	for _, p := range f.Links() {
		if _, err := ws.Resolve(p); err != nil {
			t.Errorf("Resolve(%q) refused a lexically inside path: %v", p, err)
		}
	}
}

// Layer 2 on its own: the guest, handed paths that layer 1 would have
// refused or that lead out through symlinks, reads, lists, creates and
// changes nothing outside.
func TestLayer2RefusesEscapes(t *testing.T) {
	f := escapes.New(t)
	_, g := newGuest(t, f.Root)
	before := f.Snapshot(t)
	ctx := context.Background()

	rels := append(f.Links(),
		"../outside/secret.txt", "..", "sub/../../outside/secret.txt", "/outside/secret.txt",
		filepath.ToSlash(filepath.Join(f.Outside, "secret.txt")), "a.txt/../../outside")
	for _, rel := range rels {
		if r, err := g.ReadFile(ctx, rel, 1, 0, 1000); err == nil || strings.Contains(r.Text, escapes.Secret) {
			t.Errorf("ReadFile(%q) = %q, %v; want an error", rel, r.Text, err)
		}
		if entries, err := g.ListDir(ctx, rel); err == nil {
			for _, e := range entries {
				if e.Name == "secret.txt" {
					t.Errorf("ListDir(%q) listed the outside directory: %v", rel, entries)
				}
			}
		}
		for _, req := range []EditRequest{
			{Rel: rel, Old: "", New: "planted"},
			{Rel: rel, Old: escapes.Secret, New: "changed"},
			{Rel: rel + "/new.txt", Old: "", New: "planted"},
		} {
			if rep, err := g.Edit(ctx, req); err == nil && rep.Count == 1 {
				t.Errorf("Edit(%q, old=%q) succeeded: %+v", req.Rel, req.Old, rep)
			}
		}
	}
	if after := f.Snapshot(t); after != before {
		t.Errorf("outside the workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// Escapes through a link are reported as such, not as a missing file, so
// that the model is told the truth.
func TestLayer2SaysEscape(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("creating symlinks needs a privilege on Windows")
	}
	f := escapes.New(t)
	_, g := newGuest(t, f.Root)
	for _, rel := range []string{"abs_file", "rel_file", "chain1", "rel_dir/secret.txt", "sub/up/outside/secret.txt"} {
		_, err := g.ReadFile(context.Background(), rel, 1, 0, 100)
		if KindOf(err) != KindEscapes {
			t.Errorf("ReadFile(%q) error = %v, want an escape", rel, err)
		}
	}
}

// Symlinks that stay inside the workspace keep working.
func TestLinksInsideWork(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("creating symlinks needs a privilege on Windows")
	}
	f := escapes.New(t)
	_, g := newGuest(t, f.Root)
	ctx := context.Background()
	for _, rel := range []string{"in_file", "in_chain", "in_dir/b.txt"} {
		if _, err := g.ReadFile(ctx, rel, 1, 0, 100); err != nil {
			t.Errorf("ReadFile(%q): %v", rel, err)
		}
	}
	entries, err := g.ListDir(ctx, "in_dir")
	if err != nil || len(entries) != 2 { // b.txt and the link "up"
		t.Errorf("ListDir(in_dir) = %v, %v", entries, err)
	}
	all, _ := g.ListDir(ctx, ".")
	dirs := map[string]bool{}
	for _, e := range all {
		dirs[e.Name] = e.Dir
	}
	if !dirs["in_dir"] || dirs["abs_dir"] || dirs["in_file"] {
		t.Errorf("a link counts as a directory only when it leads to one inside: %v", all)
	}
	// An edit through a link edits its target and leaves the link a link.
	if _, err := g.Edit(ctx, EditRequest{Rel: "in_chain", Old: "inside", New: "edited"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.Root, "a.txt")); string(b) != "edited\n" {
		t.Errorf("a.txt = %q after editing through a link", b)
	}
	if st, err := os.Lstat(filepath.Join(f.Root, "in_chain")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("in_chain is no longer a symlink: %v %v", st, err)
	}
}

// The mount never creates links, whatever the guest asks.
func TestMountRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fsys := &rootFS{root: root}
	os.WriteFile(filepath.Join(dir, "a"), nil, 0o644)
	if errno := fsys.Symlink("/etc/passwd", "l"); errno != experimentalsys.EPERM {
		t.Errorf("Symlink = %v, want EPERM", errno)
	}
	if errno := fsys.Link("a", "b"); errno != experimentalsys.EPERM {
		t.Errorf("Link = %v, want EPERM", errno)
	}
	if _, err := os.Lstat(filepath.Join(dir, "l")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a link was created: %v", err)
	}
}

// A FIFO planted in the workspace is refused at once rather than blocking
// the guest on its open.
func TestSpecialFilesRefused(t *testing.T) {
	f := escapes.New(t)
	if err := mkfifo(filepath.Join(f.Root, "fifo")); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	_, g := newGuest(t, f.Root)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := g.ReadFile(ctx, "fifo", 1, 0, 100); KindOf(err) != KindSpecial {
		t.Errorf("ReadFile(fifo) error = %v, want not a regular file", err)
	}
	if _, err := g.Edit(ctx, EditRequest{Rel: "fifo", Old: "x", New: "y"}); KindOf(err) != KindSpecial {
		t.Errorf("Edit(fifo) error = %v, want not a regular file", err)
	}
}

// While reads and edits run, another goroutine keeps swapping a directory
// for a symlink to outside. Not one byte outside is read or written.
func TestSwapRace(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("creating symlinks needs a privilege on Windows")
	}
	f := escapes.New(t)
	os.WriteFile(filepath.Join(f.Outside, "f.txt"), []byte(escapes.Secret), 0o644)
	_, g := newGuest(t, f.Root)
	before := f.Snapshot(t)
	swap := filepath.Join(f.Root, "swap")

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			os.RemoveAll(swap)
			os.Mkdir(swap, 0o755)
			os.WriteFile(filepath.Join(swap, "f.txt"), []byte("inside"), 0o644)
			os.RemoveAll(swap)
			os.Symlink(f.Outside, swap)
		}
	}()
	ctx := context.Background()
	reads, edits := 0, 0
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := g.ReadFile(ctx, "swap/f.txt", 1, 0, 1000); err == nil {
			reads++
			if strings.Contains(r.Text, escapes.Secret) {
				t.Fatalf("read outside through the swapped link: %q", r.Text)
			}
		}
		if rep, err := g.Edit(ctx, EditRequest{Rel: "swap/f.txt", Old: "inside", New: "edited"}); err == nil && rep.Count == 1 {
			edits++
		}
		g.Edit(ctx, EditRequest{Rel: "swap/new.txt", Old: "", New: "planted"})
		if entries, err := g.ListDir(ctx, "swap"); err == nil {
			for _, e := range entries {
				if e.Name == "secret.txt" {
					t.Fatalf("listed outside through the swapped link")
				}
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if after := f.Snapshot(t); after != before {
		t.Errorf("outside the workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if reads == 0 {
		t.Error("no read landed inside: the race was not exercised")
	}
	t.Logf("%d reads and %d edits landed inside while the link was swapped", reads, edits)
}

func TestGuestSourcesMatchModule(t *testing.T) {
	want, err := os.ReadFile("guest.wasm.sum")
	if err != nil {
		t.Fatal(err)
	}
	got, err := guestSourcesHash()
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(want)) != got {
		t.Fatal("the guest's sources changed since guest.wasm was built: run go generate ./sandbox and commit the result")
	}
}

func TestCancelledCall(t *testing.T) {
	_, g := newGuest(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.ReadFile(ctx, "x", 1, 0, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadFile with a cancelled context = %v, want context.Canceled", err)
	}
	// The guest still serves calls afterwards.
	if _, err := g.ListDir(context.Background(), "."); err != nil {
		t.Errorf("ListDir after a cancelled call: %v", err)
	}
}

// A guest working through a huge file stops at its deadline: every file
// operation of its mount asks the call's context first.
func TestDeadlineStopsGuest(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat("a\n", 4000))
	// Sparse: 16 GiB that cost no disk, and with no newline in them, so the
	// guest must read them all to find line 1,000,000.
	if err := f.Truncate(16 << 30); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	f.Close()
	_, g := newGuest(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := g.ReadFile(ctx, "huge.txt", 1000000, 1, 100); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadFile past the deadline = %v, want context.DeadlineExceeded", err)
	}
	// The guest serves the next call as usual.
	if r, err := g.ReadFile(context.Background(), "huge.txt", 1, 1, 100); err != nil || r.Text != "a\n" {
		t.Errorf("next ReadFile = %q, %v", r.Text, err)
	}
}

// A guest whose memory grew past recycleAt is closed after its call rather
// than pooled: Wasm memory never shrinks.
func TestLargeGuestIsRecycled(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat(strings.Repeat("z", 1023)+"\n", 40<<10) // 40 MiB
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o644)
	_, g := newGuest(t, dir)
	ctx := context.Background()
	if _, err := g.ListDir(ctx, "."); err != nil {
		t.Fatal(err)
	}
	if len(g.idle) != 1 {
		t.Fatalf("%d idle guests after a small call, want 1", len(g.idle))
	}
	if r, err := g.ReadFile(ctx, "big.txt", 1, 0, len(big)); err != nil || len(r.Text) != len(big) {
		t.Fatalf("ReadFile: %d bytes, %v", len(r.Text), err)
	}
	if len(g.idle) != 0 || len(g.slots) != 0 {
		t.Errorf("after a 40 MiB read: %d idle, %d live guests; want the grown one closed", len(g.idle), len(g.slots))
	}
	if _, err := g.ListDir(ctx, "."); err != nil {
		t.Errorf("the next call: %v", err)
	}
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"corral/internal/escapes"
	"corral/sandbox"
)

// recorder is an Approver that records what it was asked and answers with
// err.
type recorder struct {
	mu    sync.Mutex
	asked []Action
	err   error
}

func (r *recorder) Approve(_ context.Context, a Action) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, a)
	return r.err
}

func newExecutor(t testing.TB, dir string, ap Approver) *Executor {
	t.Helper()
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := sandbox.NewGuest(ws, sandbox.CacheDir())
	t.Cleanup(func() {
		g.Close()
		ws.Close()
	})
	if ap == nil {
		ap = &recorder{}
	}
	return NewExecutor(Config{Workspace: ws, Files: g, Approver: ap})
}

func call(t testing.TB, e *Executor, name string, args any) Result {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return e.Run(context.Background(), name, b)
}

type m = map[string]any

func write(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func wantResult(t *testing.T, got Result, text string, isErr bool) {
	t.Helper()
	if got.Text != text || got.IsError != isErr {
		t.Errorf("result = %q (error %v)\n  want %q (error %v)", got.Text, got.IsError, text, isErr)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.txt", "one\ntwo\nthree\n")
	write(t, dir, "crlf.txt", "x\r\ny\r\n")
	write(t, dir, "empty.txt", "")
	write(t, dir, "bin.dat", "text\x00more")
	write(t, dir, "noeol.txt", "last")
	write(t, dir, "utf8.txt", "héllo wörld\n")
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	e := newExecutor(t, dir, nil)

	tests := []struct {
		args  m
		text  string
		isErr bool
	}{
		{m{"path": "a.txt"}, "one\ntwo\nthree\n", false},
		{m{"path": "./a.txt"}, "one\ntwo\nthree\n", false},
		{m{"path": filepath.Join(dir, "a.txt")}, "one\ntwo\nthree\n", false},
		{m{"path": "a.txt", "offset": 2}, "two\nthree\n", false},
		{m{"path": "a.txt", "offset": 2, "limit": 1}, "two\n[truncated: showing lines 2-2 of a.txt, a file of 14 bytes; pass offset=3 to read on]", false},
		{m{"path": "a.txt", "limit": 3}, "one\ntwo\nthree\n", false},
		{m{"path": "a.txt", "offset": "2", "limit": 1.0}, "two\n[truncated: showing lines 2-2 of a.txt, a file of 14 bytes; pass offset=3 to read on]", false},
		{m{"path": "a.txt", "offset": 4}, "read_file: offset 4 is past the end of a.txt (3 lines).", true},
		{m{"path": "crlf.txt"}, "x\r\ny\r\n", false},
		{m{"path": "noeol.txt"}, "last", false},
		{m{"path": "utf8.txt"}, "héllo wörld\n", false},
		{m{"path": "empty.txt"}, "(empty file)", false},
		{m{"path": "bin.dat"}, "read_file: bin.dat is a binary file; read_file shows text only.", true},
		{m{"path": "missing.txt"}, "No such file: missing.txt", true},
		{m{"path": "sub"}, "No such file: sub", true},
		{m{"path": "a.txt/x"}, "No such file: a.txt/x", true},
		{m{"path": "../x"}, "Refused: '../x' resolves outside the workspace root.", true},
		{m{"path": ""}, "Refused: '' resolves outside the workspace root.", true},
		{m{"path": "  "}, "Refused: '  ' resolves outside the workspace root.", true},
		{m{}, `read_file: missing required argument "path".`, true},
		{m{"path": nil}, `read_file: missing required argument "path".`, true},
		{m{"path": 7}, `read_file: argument "path" must be a string.`, true},
		{m{"path": "a.txt", "offset": 0}, `read_file: argument "offset" must be a positive whole number.`, true},
		{m{"path": "a.txt", "offset": -1}, `read_file: argument "offset" must be a positive whole number.`, true},
		{m{"path": "a.txt", "limit": 1.5}, `read_file: argument "limit" must be a positive whole number.`, true},
		{m{"path": "a.txt", "limit": "many"}, `read_file: argument "limit" must be a positive whole number.`, true},
		{m{"path": "a.txt", "limit": true}, `read_file: argument "limit" must be a positive whole number.`, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			wantResult(t, call(t, e, "read_file", tt.args), tt.text, tt.isErr)
		})
	}
}

func TestReadFileClamp(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; b.Len() < 100000; i++ {
		fmt.Fprintf(&b, "line %05d ééé\n", i)
	}
	const lineChars = 15 // 18 bytes
	write(t, dir, "big.txt", b.String())
	e := newExecutor(t, dir, nil)
	r := call(t, e, "read_file", m{"path": "big.txt"})
	if r.IsError {
		t.Fatal(r.Text)
	}
	body, marker, ok := strings.Cut(r.Text, "[truncated: ")
	if !ok {
		t.Fatalf("no truncation marker in %d chars", len(r.Text))
	}
	lines := MaxChars / lineChars
	if n := len([]rune(body)); n > MaxChars || n != lines*lineChars {
		t.Errorf("clamped body is %d characters, want the %d whole lines that fit in %d", n, lines, MaxChars)
	}
	want := fmt.Sprintf("showing lines 1-%d of big.txt, a file of %d bytes; pass offset=%d to read on]", lines, b.Len(), lines+1)
	if marker != want {
		t.Errorf("marker = %q, want %q", marker, want)
	}
	// Reading on from the offset the marker gives continues exactly.
	r = call(t, e, "read_file", m{"path": "big.txt", "offset": lines + 1, "limit": 1})
	if !strings.HasPrefix(r.Text, fmt.Sprintf("line %05d ééé\n", lines+1)) {
		t.Errorf("read on = %q", r.Text[:40])
	}
}

func TestReadFileLongLine(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "min.js", strings.Repeat("é", 3*MaxChars)+"\nsecond\n")
	e := newExecutor(t, dir, nil)
	r := call(t, e, "read_file", m{"path": "min.js"})
	body, marker, ok := strings.Cut(r.Text, "\n[truncated: ")
	if r.IsError || !ok {
		t.Fatalf("result = %.80q", r.Text)
	}
	if body != strings.Repeat("é", MaxChars) {
		t.Errorf("cut line has %d characters, want %d whole ones", len([]rune(body)), MaxChars)
	}
	if !strings.Contains(marker, "line 1 of min.js is longer than 20000 characters") {
		t.Errorf("marker = %q", marker)
	}
	if r := call(t, e, "read_file", m{"path": "min.js", "offset": 2}); r.Text != "second\n" {
		t.Errorf("offset past the long line = %q", r.Text)
	}
}

func TestListFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "b.txt", "")
	write(t, dir, "a.txt", "")
	write(t, dir, ".hidden", "")
	write(t, dir, "zdir/x", "")
	write(t, dir, "adir/y", "")
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	e := newExecutor(t, dir, nil)
	tests := []struct {
		args  m
		text  string
		isErr bool
	}{
		{m{}, "adir/\nempty/\nzdir/\n.hidden\na.txt\nb.txt\n", false},
		{m{"path": "."}, "adir/\nempty/\nzdir/\n.hidden\na.txt\nb.txt\n", false},
		{m{"path": ""}, "adir/\nempty/\nzdir/\n.hidden\na.txt\nb.txt\n", false},
		{m{"path": "zdir"}, "x\n", false},
		{m{"path": "empty"}, "(empty directory)", false},
		{m{"path": "nope"}, "No such directory: nope", true},
		{m{"path": "a.txt"}, "No such directory: a.txt", true},
		{m{"path": ".."}, "Refused: '..' resolves outside the workspace root.", true},
		{m{"path": 3}, `list_files: argument "path" must be a string.`, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			wantResult(t, call(t, e, "list_files", tt.args), tt.text, tt.isErr)
		})
	}
}

func TestListFilesClamp(t *testing.T) {
	dir := t.TempDir()
	for i := range 3000 {
		write(t, dir, fmt.Sprintf("file-with-a-long-name-%04d.txt", i), "")
	}
	e := newExecutor(t, dir, nil)
	r := call(t, e, "list_files", m{})
	body, marker, ok := strings.Cut(r.Text, "[truncated: ")
	if r.IsError || !ok {
		t.Fatalf("no marker: %.100q", r.Text)
	}
	shown := strings.Count(body, "\n")
	if len(body) > MaxChars || shown != MaxChars/31 {
		t.Errorf("clamped listing: %d chars, %d entries", len(body), shown)
	}
	if want := fmt.Sprintf("showing %d of 3000 entries in .; list a subdirectory, or use run_bash to filter]", shown); marker != want {
		t.Errorf("marker = %q, want %q", marker, want)
	}
}

func TestEditFileMessages(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.txt", "alpha beta beta gamma\n")
	write(t, dir, "full.txt", "content")
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	ap := &recorder{}
	e := newExecutor(t, dir, ap)
	tests := []struct {
		args  m
		text  string
		isErr bool
	}{
		{m{"path": "a.txt", "old_str": "x", "new_str": "x"}, "edit_file: old_str and new_str are identical — nothing to do.", true},
		{m{"path": "nope.txt", "old_str": "x", "new_str": "y"}, "No such file: nope.txt (pass an empty old_str to create it).", true},
		{m{"path": "a.txt", "old_str": "delta", "new_str": "y"}, "edit_file: old_str not found in a.txt.", true},
		{m{"path": "a.txt", "old_str": "beta", "new_str": "y"}, "edit_file: old_str appears 2 times in a.txt — include more surrounding context so it is unique.", true},
		{m{"path": "full.txt", "old_str": "", "new_str": "y"}, "edit_file: full.txt already exists and is not empty — old_str must not be empty when editing it.", true},
		{m{"path": "sub", "old_str": "x", "new_str": "y"}, "edit_file: sub is a directory.", true},
		{m{"path": "../a.txt", "old_str": "", "new_str": "y"}, "Refused: '../a.txt' resolves outside the workspace root.", true},
		{m{"path": "a.txt", "new_str": "y"}, `edit_file: missing required argument "old_str".`, true},
		{m{"path": "a.txt", "old_str": "x"}, `edit_file: missing required argument "new_str".`, true},
		{m{"old_str": "x", "new_str": "y"}, `edit_file: missing required argument "path".`, true},
		{m{"path": "a.txt", "old_str": 1, "new_str": "y"}, `edit_file: argument "old_str" must be a string.`, true},
		{m{"path": "a.txt", "old_str": "x", "new_str": []int{1}}, `edit_file: argument "new_str" must be a string.`, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			wantResult(t, call(t, e, "edit_file", tt.args), tt.text, tt.isErr)
		})
	}
	if len(ap.asked) != 0 {
		t.Errorf("invalid calls asked for approval: %v", ap.asked)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "alpha beta beta gamma\n" {
		t.Errorf("a.txt changed: %q", b)
	}
}

func TestEditFileOverlappingMatches(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.txt", "aaa")
	e := newExecutor(t, dir, nil)
	wantResult(t, call(t, e, "edit_file", m{"path": "a.txt", "old_str": "aa", "new_str": "b"}),
		"edit_file: old_str appears 2 times in a.txt — include more surrounding context so it is unique.", true)
}

func TestEditFileCreateAndEdit(t *testing.T) {
	dir := t.TempDir()
	ap := &recorder{}
	e := newExecutor(t, dir, ap)
	wantResult(t, call(t, e, "edit_file", m{"path": "new/deep/f.go", "old_str": "", "new_str": "package fé\n"}), "Created new/deep/f.go.", false)
	wantResult(t, call(t, e, "edit_file", m{"path": "new/deep/f.go", "old_str": "fé", "new_str": "main"}), "Edited new/deep/f.go.", false)
	b, _ := os.ReadFile(filepath.Join(dir, "new", "deep", "f.go"))
	if string(b) != "package main\n" {
		t.Errorf("f.go = %q", b)
	}
	want := []Action{
		{Tool: "edit_file", Description: "create new/deep/f.go (11 chars)"},
		{Tool: "edit_file", Description: "edit new/deep/f.go (replace 2 chars with 4)"},
	}
	if fmt.Sprint(ap.asked) != fmt.Sprint(want) {
		t.Errorf("approvals asked = %v, want %v", ap.asked, want)
	}
	// Creating an empty file that exists empty is an edit of nothing.
	write(t, dir, "empty", "")
	wantResult(t, call(t, e, "edit_file", m{"path": "empty", "old_str": "", "new_str": "x"}), "Edited empty.", false)
	assertNoTemps(t, dir)
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".corral-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestEditFileKeepsFormat(t *testing.T) {
	dir := t.TempDir()
	crlf := write(t, dir, "crlf.txt", "one\r\ntwo\r\nthree\r\n")
	bom := write(t, dir, "bom.txt", "\ufeffname=1\nother=2\n")
	script := write(t, dir, "run.sh", "#!/bin/sh\necho hi\n")
	os.Chmod(script, 0o750)
	e := newExecutor(t, dir, nil)
	e.cfg.Approver = &recorder{}

	wantResult(t, call(t, e, "edit_file", m{"path": "crlf.txt", "old_str": "one\ntwo", "new_str": "1\n2\n2.5"}), "Edited crlf.txt.", false)
	if b, _ := os.ReadFile(crlf); string(b) != "1\r\n2\r\n2.5\r\nthree\r\n" {
		t.Errorf("CRLF file = %q", b)
	}
	wantResult(t, call(t, e, "edit_file", m{"path": "bom.txt", "old_str": "name=1", "new_str": "name=2"}), "Edited bom.txt.", false)
	if b, _ := os.ReadFile(bom); string(b) != "\ufeffname=2\nother=2\n" {
		t.Errorf("BOM file = %q", b)
	}
	wantResult(t, call(t, e, "edit_file", m{"path": "run.sh", "old_str": "hi", "new_str": "there"}), "Edited run.sh.", false)
	if st, _ := os.Stat(script); runtime.GOOS != "windows" && st.Mode().Perm() != 0o750 {
		t.Errorf("mode after edit = %v, want 0750", st.Mode().Perm())
	}
	assertNoTemps(t, dir)
}

func TestEditFileNewFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	dir := t.TempDir()
	e := newExecutor(t, dir, nil)
	call(t, e, "edit_file", m{"path": "n.txt", "old_str": "", "new_str": "x"})
	st, err := os.Stat(filepath.Join(dir, "n.txt"))
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(dir, "probe")
	os.WriteFile(probe, nil, 0o666) // gets the umask, as any program's file does
	want, _ := os.Stat(probe)
	if st.Mode().Perm() != want.Mode().Perm() {
		t.Errorf("new file mode = %v, want %v (0666 less the umask)", st.Mode().Perm(), want.Mode().Perm())
	}
}

func TestEditFileStale(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a.txt", "one\n")
	e := newExecutor(t, dir, nil)
	call(t, e, "read_file", m{"path": "a.txt"})
	os.WriteFile(p, []byte("one, changed elsewhere\n"), 0o644)
	wantResult(t, call(t, e, "edit_file", m{"path": "a.txt", "old_str": "one", "new_str": "two"}),
		"edit_file: a.txt changed on disk since you last read it — read it again, then edit.", true)
	call(t, e, "read_file", m{"path": "a.txt"})
	wantResult(t, call(t, e, "edit_file", m{"path": "a.txt", "old_str": "one", "new_str": "two"}), "Edited a.txt.", false)
	// Its own edit does not make the file stale.
	wantResult(t, call(t, e, "edit_file", m{"path": "a.txt", "old_str": "two", "new_str": "three"}), "Edited a.txt.", false)
}

// A file changed while the user was deciding is not overwritten.
func TestEditFileChangedDuringApproval(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a.txt", "one\n")
	e := newExecutor(t, dir, nil)
	e.cfg.Approver = approveFunc(func() { os.WriteFile(p, []byte("one plus more\n"), 0o644) })
	wantResult(t, call(t, e, "edit_file", m{"path": "a.txt", "old_str": "one", "new_str": "two"}),
		"edit_file: a.txt changed on disk since you last read it — read it again, then edit.", true)
	if b, _ := os.ReadFile(p); string(b) != "one plus more\n" {
		t.Errorf("a.txt = %q", b)
	}
}

type approveFunc func()

func (f approveFunc) Approve(context.Context, Action) error { f(); return nil }

func TestEditFileDeclined(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a.txt", "one\n")
	e := newExecutor(t, dir, &recorder{err: errors.New("Not run: the user declined edit_file.")})
	wantResult(t, call(t, e, "edit_file", m{"path": "a.txt", "old_str": "one", "new_str": "two"}), "Not run: the user declined edit_file.", true)
	wantResult(t, call(t, e, "edit_file", m{"path": "b.txt", "old_str": "", "new_str": "two"}), "Not run: the user declined edit_file.", true)
	if b, _ := os.ReadFile(p); string(b) != "one\n" {
		t.Errorf("a.txt = %q after a declined edit", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt exists after a declined create")
	}
	assertNoTemps(t, dir)
}

// The approval prompt shows control characters rather than obeying them.
func TestEditFileDescriptionIsVisible(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("control characters are not valid in Windows file names")
	}
	dir := t.TempDir()
	ap := &recorder{err: errors.New("no")}
	e := newExecutor(t, dir, ap)
	call(t, e, "edit_file", m{"path": "x\x1b[2Jy\r.txt", "old_str": "", "new_str": "z"})
	if len(ap.asked) != 1 || ap.asked[0].Description != `create x\x1b[2Jy\r.txt (1 chars)` {
		t.Errorf("asked = %q", ap.asked)
	}
}

func TestUnknownToolAndBadArgs(t *testing.T) {
	e := newExecutor(t, t.TempDir(), nil)
	wantResult(t, e.Run(context.Background(), "rm_rf", nil), "Unknown tool: rm_rf. The tools are read_file, list_files, edit_file and run_bash.", true)
	for _, raw := range []string{`[]`, `"x"`, `{`, `null`, `3`} {
		wantResult(t, e.Run(context.Background(), "read_file", json.RawMessage(raw)), "read_file: the arguments must be a JSON object.", true)
	}
}

// The escape corpus, through each of the three tools: every attempt is an
// error result, no secret reaches the model, and nothing outside changes.
func TestToolsEscapeCorpus(t *testing.T) {
	f := escapes.New(t)
	e := newExecutor(t, f.Root, nil)
	e.cfg.Approver = &recorder{}
	before := f.Snapshot(t)
	paths := append(f.Lexical(), f.Links()...)
	for _, p := range paths {
		results := map[string]Result{
			"read":   call(t, e, "read_file", m{"path": p}),
			"list":   call(t, e, "list_files", m{"path": p}),
			"create": call(t, e, "edit_file", m{"path": p, "old_str": "", "new_str": "planted"}),
			"edit":   call(t, e, "edit_file", m{"path": p, "old_str": escapes.Secret, "new_str": "changed"}),
		}
		if strings.TrimSpace(p) != "" { // "  /new.txt" is a fine name
			results["nested"] = call(t, e, "edit_file", m{"path": p + "/new.txt", "old_str": "", "new_str": "planted"})
		}
		for op, r := range results {
			if strings.Contains(r.Text, escapes.Secret) {
				t.Errorf("%s %q leaked: %q", op, p, r.Text)
			}
			// "link/../x" collapses to "x", inside; creating it is fine.
			if !r.IsError && op != "list" && !strings.Contains(p, "/../") {
				t.Errorf("%s %q succeeded: %q", op, p, r.Text)
			}
		}
	}
	// Escapes through links say so, in the one refusal message.
	for _, p := range f.Links() {
		if p == "loop1" || strings.HasPrefix(p, "dangling") || strings.Contains(p, "/../") {
			continue
		}
		want := "Refused: '" + p + "' resolves outside the workspace root."
		if r := call(t, e, "read_file", m{"path": p}); r.Text != want && r.Text != "No such file: "+p {
			t.Errorf("read_file %q = %q, want %q", p, r.Text, want)
		}
	}
	if r := call(t, e, "read_file", m{"path": escapes.Long()}); !r.IsError {
		t.Errorf("a too-long path read something: %q", r.Text)
	}
	if after := f.Snapshot(t); after != before {
		t.Errorf("outside the workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

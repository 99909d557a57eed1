package fileops

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// edit runs a whole edit natively: check, write beside, rename over.
func edit(t *testing.T, o Ops, rel, old, repl string) (EditReply, error) {
	rep, err := o.Edit(EditRequest{Rel: rel, Old: old, New: repl})
	if err != nil || rep.Count != 1 {
		return rep, err
	}
	_, err = o.Rename(rep.Temp, rep.Target)
	return rep, err
}

// FuzzEditReplace checks edit_file's replacement against a plain model of
// it: the edit happens exactly when old occurs once, overlaps counted, and
// then the file is what strings.Replace makes of it; otherwise the file is
// untouched. Files with CR or a BOM, whose old and new are translated to the
// file's conventions, are checked for the untouched-on-failure half only.
func FuzzEditReplace(f *testing.F) {
	for _, s := range [][3]string{
		{"hello world", "world", "there"},
		{"aaa", "aa", "b"},
		{"abcabc", "abc", "x"},
		{"a\r\nb\r\n", "a\nb", "c\nd"},
		{"\ufeffkey=1", "key", "k"},
		{"x", "", "y"},
		{"", "", "new"},
		{"é\x00ü", "\x00", ""},
		{"line\n", "line\n", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, content, old, repl string) {
		if old == repl {
			return // refused before any edit
		}
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := edit(t, Ops{Dir: dir}, "f", old, repl)
		got, rerr := os.ReadFile(p)
		if rerr != nil {
			t.Fatal(rerr)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Fatalf("temporary files left: %v", entries)
		}
		changed := err == nil && rep.Count == 1
		if !changed && string(got) != content {
			t.Fatalf("failed edit (%v, count %d) changed the file: %q -> %q", err, rep.Count, content, got)
		}
		if strings.ContainsRune(content, '\r') || bytes.HasPrefix([]byte(content), utf8BOM) {
			return
		}
		n := overlapping(content, old)
		switch {
		case old == "" && content == "":
			if !changed || string(got) != repl {
				t.Fatalf("empty file, empty old: got %q, %v", got, err)
			}
		case old == "":
			if kindOf(err) != Exists {
				t.Fatalf("empty old on a non-empty file: %v", err)
			}
		case n != 1:
			if changed || rep.Count != n {
				t.Fatalf("old occurs %d times: count %d, changed %v", n, rep.Count, changed)
			}
		default:
			if want := strings.Replace(content, old, repl, 1); !changed || string(got) != want {
				t.Fatalf("edit of %q: got %q, want %q (%v)", content, got, want, err)
			}
		}
	})
}

func overlapping(s, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			n++
		}
	}
	return n
}

func TestWireRoundTrip(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("x\ny\n"), 0o644)
	c := Client{Send: func(req []byte) ([]byte, error) { return Serve(Ops{Dir: dir}, req), nil }}
	r, err := c.Read("a", 2, 0, 100)
	if err != nil || r.Text != "y\n" || r.First != 2 || r.Last != 2 || r.Lines != 2 {
		t.Errorf("Read = %+v, %v", r, err)
	}
	if _, err := c.Read("nope", 1, 0, 100); kindOf(err) != NotExist {
		t.Errorf("Read(nope) = %v", err)
	}
	if _, err := c.Read("../x", 1, 0, 100); kindOf(err) != Escapes {
		t.Errorf("Read(../x) = %v, want refused by the wire contract", err)
	}
	// Garbage never panics and always gets a failure reply.
	for _, req := range [][]byte{nil, {0}, {99}, {opRead}, {opRead, 0xff, 0xff, 0xff}, {opEdit, 2, 'a'}} {
		if reply := Serve(Ops{Dir: dir}, req); len(reply) == 0 || reply[0] == 0 {
			t.Errorf("Serve(%v) = %v, want a failure", req, reply)
		}
	}
}

package fileops

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// refRead is Read's specification, line by line and in memory.
func refRead(content string, offset, limit, budget int) ReadReply {
	lines := strings.SplitAfter(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var text strings.Builder
	chars := 0
	for i := offset - 1; i < len(lines); i++ {
		if limit > 0 && i-(offset-1) >= limit {
			return ReadReply{Text: text.String(), First: offset, Last: i, More: true}
		}
		c := utf8.RuneCountInString(lines[i])
		if chars+c > budget {
			if i == offset-1 {
				return ReadReply{Text: string(cutRunes([]byte(lines[i]), budget)), First: offset, Last: i + 1, More: true, Cut: true}
			}
			return ReadReply{Text: text.String(), First: offset, Last: i, More: true}
		}
		text.WriteString(lines[i])
		chars += c
	}
	return ReadReply{Text: text.String(), First: offset, Last: max(len(lines), offset-1), Lines: len(lines)}
}

// TestReadMatchesSpec compares Read with refRead on files that cross its
// block size with lines and characters of every length.
func TestReadMatchesSpec(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "日本", "🙂", "\n", "\r\n", "word ", strings.Repeat("x", 700), strings.Repeat("ü", 5000)}
	dir := t.TempDir()
	o := Ops{Dir: dir}
	for iter := range 150 {
		var b strings.Builder
		size := rng.IntN(300 << 10)
		for b.Len() < size {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if rng.IntN(2) == 0 {
			b.WriteString("\n")
		}
		content := b.String()
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		nlines := strings.Count(content, "\n") + 1
		offset := 1 + rng.IntN(nlines+2)
		if rng.IntN(3) == 0 {
			offset = 1
		}
		limit := []int{0, 1, 2, rng.IntN(nlines + 1)}[rng.IntN(4)]
		budget := []int{20000, 100, 1 << 20, 1 + rng.IntN(70000)}[rng.IntN(4)]
		got, err := o.Read("f", offset, limit, budget)
		if err != nil {
			t.Fatal(err)
		}
		want := refRead(content, offset, limit, budget)
		got.Size, got.Stamp = 0, Stamp{}
		if got.Text != want.Text || got.First != want.First || got.Last != want.Last || got.More != want.More ||
			got.Cut != want.Cut || (!want.More && got.Lines != want.Lines) {
			t.Fatalf("iteration %d: Read(offset %d, limit %d, budget %d) of %d bytes:\n got  %d chars, last %d, more %v, cut %v, lines %d\n want %d chars, last %d, more %v, cut %v, lines %d",
				iter, offset, limit, budget, len(content),
				utf8.RuneCountInString(got.Text), got.Last, got.More, got.Cut, got.Lines,
				utf8.RuneCountInString(want.Text), want.Last, want.More, want.Cut, want.Lines)
		}
	}
}

package shell

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClamp(t *testing.T) {
	long := strings.Repeat("a", 5000) + "MIDDLE" + strings.Repeat("z", 5000)
	tests := []struct {
		name, in  string
		max       int
		wantSame  bool
		wantStart string
		wantEnd   string
	}{
		{"short text is untouched", "hello", 100, true, "hello", "hello"},
		{"exactly max is untouched", strings.Repeat("x", 200), 200, true, "x", "x"},
		{"long keeps head and tail", long, 1000, false, "aaaa", "zzzz"},
		{"multi-byte characters", strings.Repeat("é", 3000), 1000, false, "é", "é"},
		{"four-byte characters", strings.Repeat("😀", 3000), 1000, false, "😀", "😀"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Clamp(tc.in, tc.max)
			if tc.wantSame {
				if got != tc.in {
					t.Fatalf("Clamp changed a short text: %q", got)
				}
				return
			}
			if n := utf8.RuneCountInString(got); n > tc.max {
				t.Errorf("Clamp kept %d characters, want at most %d", n, tc.max)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Clamp split a UTF-8 character")
			}
			if !strings.HasPrefix(got, tc.wantStart) || !strings.HasSuffix(got, tc.wantEnd) {
				t.Errorf("Clamp lost the head or the tail: %.40q ... %.40q", got, got[len(got)-40:])
			}
			kept := utf8.RuneCountInString(got) - utf8.RuneCountInString(marker(0)) + 1
			left := utf8.RuneCountInString(tc.in) - kept
			if !strings.Contains(got, marker(int64(left))) && !strings.Contains(got, "characters left out") {
				t.Errorf("Clamp has no marker: %q", got)
			}
		})
	}
}

// The marker counts exactly the characters that are not shown.
func TestClampMarkerCount(t *testing.T) {
	in := strings.Repeat("0123456789", 1000) // 10,000 characters
	got := Clamp(in, 1000)
	i := strings.Index(got, "\n[... ")
	j := strings.Index(got, " characters left out ...]\n")
	if i < 0 || j < 0 {
		t.Fatalf("no marker in %q", got)
	}
	head, tail := got[:i], got[j+len(" characters left out ...]\n"):]
	want := marker(int64(len(in) - len(head) - len(tail)))
	if !strings.Contains(got, want) {
		t.Errorf("marker %q, want %q", got[i:j+26], want)
	}
}

// A multi-byte character that straddles the cut is never split, whatever
// its offset.
func TestClampCutInsideCharacter(t *testing.T) {
	for shift := 0; shift < 4; shift++ {
		in := strings.Repeat("a", shift) + strings.Repeat("€😀é", 2000)
		got := Clamp(in, 500)
		if !utf8.ValidString(got) {
			t.Fatalf("shift %d: split a character", shift)
		}
	}
}

func TestHeadTailWriter(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		keep   int
		want   string
	}{
		{"short", []string{"ab", "cd"}, 10, "abcd"},
		{"drops the middle", []string{"head-", strings.Repeat("m", 1000), "-tail"}, 5, "head-" + marker(1000) + "-tail"},
		{"byte by byte", strings.Split("0123456789abcdefghij", ""), 3, "012" + marker(14) + "hij"},
		{"multi-byte at the cut", []string{strings.Repeat("é", 10)}, 3, "ééé" + marker(4) + "ééé"},
		{"multi-byte split across writes", []string{"ab\xc3", "\xa9cd", strings.Repeat("x", 100), "\xe2\x82", "\xacyz"}, 3, "abé" + marker(102) + "€yz"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := NewHeadTail(tc.keep)
			for _, c := range tc.chunks {
				if n, err := w.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := w.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Huge writes keep the buffers bounded.
func TestHeadTailBounded(t *testing.T) {
	w := NewHeadTail(100)
	chunk := []byte(strings.Repeat("x", 64<<10))
	for i := 0; i < 100; i++ {
		w.Write(chunk)
	}
	if cap(w.head) > 1024 || cap(w.tail) > 64<<10+1024 {
		t.Errorf("buffers grew: head %d, tail %d", cap(w.head), cap(w.tail))
	}
	if got, want := w.Len(), int64(100*64<<10); got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
}

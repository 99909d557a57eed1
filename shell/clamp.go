package shell

import (
	"fmt"
	"strings"
	"sync"
)

// MaxChars bounds the text of a run_bash result.
const MaxChars = 20000

// markerReserve is room kept for the marker, whose length depends on the
// count it reports; 64 characters hold any int64.
const markerReserve = 64

func marker(n int64) string {
	return fmt.Sprintf("\n[... %d characters left out ...]\n", n)
}

// isCharStart reports whether b starts a character, counting every byte that
// is not a UTF-8 continuation byte as one character. Counting this way never
// splits a valid UTF-8 sequence, and it needs no decoding, which matters when
// a command prints gigabytes.
func isCharStart(b byte) bool { return b&0xC0 != 0x80 }

func charCount(s []byte) int64 {
	var n int64
	for _, b := range s {
		if isCharStart(b) {
			n++
		}
	}
	return n
}

// headChars returns the longest prefix of s holding at most n characters.
func headChars(s string, n int64) string {
	var seen int64
	for i := 0; i < len(s); i++ {
		if isCharStart(s[i]) {
			if seen == n {
				return s[:i]
			}
			seen++
		}
	}
	return s
}

// tailChars returns the longest suffix of s holding at most n characters.
func tailChars(s string, n int64) string {
	if n <= 0 {
		return ""
	}
	var seen int64
	for i := len(s) - 1; i >= 0; i-- {
		if isCharStart(s[i]) {
			seen++
			if seen == n {
				return s[i:]
			}
		}
	}
	return s
}

// A segment is a piece of a text, or a gap: characters that were counted but
// not kept.
type segment struct {
	text string
	gap  int64
}

// clampSegments joins segs, keeping at most max characters in all: when the
// text is too long or has gaps, it keeps a head and a tail around one marker
// that counts every character left out.
func clampSegments(segs []segment, max int) string {
	var total int64
	gaps := false
	for _, s := range segs {
		total += charCount([]byte(s.text)) + s.gap
		gaps = gaps || s.gap > 0
	}
	if !gaps && total <= int64(max) {
		var b strings.Builder
		for _, s := range segs {
			b.WriteString(s.text)
		}
		return b.String()
	}
	budget := int64(max - markerReserve)
	if budget < 2 {
		budget = 2
	}
	headBudget, tailBudget := budget/2, budget-budget/2

	// The head stops at the first gap and the tail at the last, since the
	// characters inside a gap are gone.
	var head strings.Builder
	var kept int64
	for _, s := range segs {
		if s.gap > 0 || kept == headBudget {
			break
		}
		part := headChars(s.text, headBudget-kept)
		head.WriteString(part)
		kept += charCount([]byte(part))
		if len(part) < len(s.text) {
			break
		}
	}
	var tailParts []string
	var tailKept int64
	for i := len(segs) - 1; i >= 0; i-- {
		s := segs[i]
		if s.gap > 0 || tailKept == tailBudget {
			break
		}
		part := tailChars(s.text, tailBudget-tailKept)
		tailParts = append(tailParts, part)
		tailKept += charCount([]byte(part))
		if len(part) < len(s.text) {
			break
		}
	}
	var b strings.Builder
	b.WriteString(head.String())
	b.WriteString(marker(total - kept - tailKept))
	for i := len(tailParts) - 1; i >= 0; i-- {
		b.WriteString(tailParts[i])
	}
	return b.String()
}

// Clamp returns s if it holds at most max characters, and otherwise its head
// and its tail around a marker saying how many characters were left out. The
// result holds at most max characters (for max of at least 100) and never
// splits a UTF-8 character. Both ends are kept because a build's error sits
// at the end of its output and the command's context at the start.
func Clamp(s string, max int) string {
	return clampSegments([]segment{{text: s}}, max)
}

// A HeadTail is a writer that keeps the first and the last Keep characters
// written to it and counts the ones in between, so that a command printing
// gigabytes is drained in bounded memory. It is safe for concurrent use, as
// a script's commands and background jobs may write at once.
type HeadTail struct {
	mu       sync.Mutex
	keep     int64
	head     []byte
	headN    int64
	headFull bool
	tail     []byte
	dropped  int64
}

// NewHeadTail returns a HeadTail keeping keep characters at each end.
func NewHeadTail(keep int) *HeadTail {
	if keep < 1 {
		keep = 1
	}
	return &HeadTail{keep: int64(keep)}
}

// tailCap is how many bytes of tail are enough for keep characters of up to
// four bytes each.
func (w *HeadTail) tailCap() int { return int(4 * w.keep) }

// Write keeps what it needs of p. It never fails.
func (w *HeadTail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if !w.headFull {
		i := 0
		for ; i < len(p); i++ {
			if isCharStart(p[i]) {
				if w.headN == w.keep {
					w.headFull = true
					break
				}
				w.headN++
			}
		}
		w.head = append(w.head, p[:i]...)
		p = p[i:]
	}
	if len(p) == 0 {
		return n, nil
	}
	c := w.tailCap()
	if len(p) >= c {
		w.dropped += charCount(w.tail) + charCount(p[:len(p)-c])
		w.tail = append(w.tail[:0], p[len(p)-c:]...)
		return n, nil
	}
	w.tail = append(w.tail, p...)
	if len(w.tail) > 2*c {
		cut := len(w.tail) - c
		w.dropped += charCount(w.tail[:cut])
		w.tail = append(w.tail[:0], w.tail[cut:]...)
	}
	return n, nil
}

// segments returns what w holds: head, the count of characters left out,
// and tail.
func (w *HeadTail) segments() []segment {
	w.mu.Lock()
	defer w.mu.Unlock()
	tail := w.tail
	// A tail cut inside a character starts with continuation bytes whose
	// leading byte was already counted as dropped.
	for len(tail) > 0 && !isCharStart(tail[0]) {
		tail = tail[1:]
	}
	kept := tailChars(string(tail), w.keep)
	gap := w.dropped + charCount(tail) - charCount([]byte(kept))
	return []segment{{text: string(w.head)}, {gap: gap}, {text: kept}}
}

// Len returns how many characters were written in all.
func (w *HeadTail) Len() int64 {
	var n int64
	for _, s := range w.segments() {
		n += charCount([]byte(s.text)) + s.gap
	}
	return n
}

// String returns what was written, clamped to 2*Keep characters plus a
// marker when anything was left out.
func (w *HeadTail) String() string {
	segs := w.segments()
	if segs[1].gap == 0 {
		return segs[0].text + segs[2].text
	}
	return segs[0].text + marker(segs[1].gap) + segs[2].text
}

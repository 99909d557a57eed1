package shell

import (
	"fmt"
	"strings"
	"time"
)

// Text composes the result text the model reads, clamped to MaxChars: the
// fallback line if any, stdout, then "[stderr]" and stderr when stderr is
// not empty, the timeout or interruption line, and "[exit N]" last. The
// clamp keeps head and tail, so the exit line always survives.
func (r Result) Text() string {
	var segs []segment
	text := func(s string) { segs = append(segs, segment{text: s}) }
	if r.Fallback != "" {
		text("[" + r.Fallback + "]\n")
	}
	out := streamSegments(r.stdout, r.Stdout)
	segs = append(segs, out...)
	errSegs := streamSegments(r.stderr, r.Stderr)
	if !emptySegments(errSegs) {
		if !emptySegments(out) && !endsWithNewline(out) {
			text("\n")
		}
		text("[stderr]\n")
		segs = append(segs, errSegs...)
	}
	switch {
	case r.TimedOut:
		text(fmt.Sprintf("\n[timed out after %s - process tree killed]", seconds(r.Timeout)))
	case r.Interrupted:
		text("\n[interrupted - process tree killed]")
	}
	text(fmt.Sprintf("\n[exit %d]", r.ExitCode))
	return clampSegments(segs, MaxChars)
}

// seconds writes a timeout as the "<N>s": whole seconds when whole.
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", d.Seconds()), "0"), ".") + "s"
}

func streamSegments(w *HeadTail, s string) []segment {
	if w != nil {
		return w.segments()
	}
	return []segment{{text: s}}
}

func emptySegments(segs []segment) bool {
	for _, s := range segs {
		if s.text != "" || s.gap > 0 {
			return false
		}
	}
	return true
}

func endsWithNewline(segs []segment) bool {
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].text != "" {
			return strings.HasSuffix(segs[i].text, "\n")
		}
		if segs[i].gap > 0 {
			return false
		}
	}
	return false
}

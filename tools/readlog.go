package tools

import (
	"sync"

	"corral/sandbox"
)

// readLog remembers the stamp of each file as the model last saw it, so that
// an edit of a file that changed on disk since is refused.
type readLog struct {
	mu   sync.Mutex
	seen map[string]sandbox.Stamp
}

func (l *readLog) get(rel string) (sandbox.Stamp, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.seen[rel]
	return s, ok
}

func (l *readLog) put(rel string, s sandbox.Stamp) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[rel] = s
}

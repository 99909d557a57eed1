package agent

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// StateDir returns the directory corral keeps its state in: CORRAL_STATE_DIR
// when set, else the platform's place for application state.
func StateDir() (string, error) {
	if d := os.Getenv("CORRAL_STATE_DIR"); d != "" {
		return d, nil
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "corral"), nil
		}
		d, err := os.UserCacheDir() // %LocalAppData% on Windows
		if err != nil {
			return "", fmt.Errorf("state directory: %w", err)
		}
		return filepath.Join(d, "corral"), nil
	case "darwin", "ios":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("state directory: %w", err)
		}
		return filepath.Join(home, "Library", "Application Support", "corral"), nil
	default:
		if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
			return filepath.Join(d, "corral"), nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("state directory: %w", err)
		}
		return filepath.Join(home, ".local", "state", "corral"), nil
	}
}

// SessionsDir is where session files live.
func SessionsDir() (string, error) {
	d, err := StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "sessions"), nil
}

// A Session is an append-only JSONL file of a run's events. Each event is
// written with one write as it happens, so that a crash, a kill or Ctrl-C
// loses nothing already done.
type Session struct {
	ID   string
	Path string

	mu   sync.Mutex
	f    *os.File
	err  error
	head Event
}

// NewSession creates a session file in dir for a run in workspace.
func NewSession(dir, workspace, provider, model string) (*Session, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	var rnd [3]byte
	rand.Read(rnd[:])
	id := time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(rnd[:])
	path := filepath.Join(dir, id+".jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	s := &Session{ID: id, Path: path, f: f}
	s.head = Event{Type: EventSession, Time: time.Now().UTC(), Session: id, Workspace: workspace, Provider: provider, Model: model}
	s.Event(s.head)
	if s.err != nil {
		f.Close()
		return nil, s.err
	}
	return s, nil
}

// OpenSession opens an existing session file to append to it, and returns
// its events.
func OpenSession(path string) (*Session, []Event, error) {
	events, err := LoadEvents(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("session: %w", err)
	}
	// A torn last line must stay a line of its own, or the next event
	// would be glued to it and lost too.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			f.Write([]byte("\n"))
		}
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	s := &Session{ID: id, Path: path, f: f}
	if len(events) > 0 && events[0].Type == EventSession {
		s.head = events[0]
	}
	return s, events, nil
}

// Head returns the session's first event, which names its workspace,
// provider and model.
func (s *Session) Head() Event { return s.head }

// Event appends e to the file unless it is a streaming piece. The first
// write error is kept for Err and later events are dropped.
func (s *Session) Event(e Event) {
	if !e.Stored() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.f == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	line, err := json.Marshal(e)
	if err != nil {
		s.err = fmt.Errorf("session %s: %w", s.ID, err)
		return
	}
	if _, err := s.f.Write(append(line, '\n')); err != nil {
		s.err = fmt.Errorf("session %s: %w", s.ID, err)
	}
}

// Err returns the first error writing the session, if any.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close syncs and closes the file.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return s.err
	}
	s.f.Sync()
	err := s.f.Close()
	s.f = nil
	if s.err != nil {
		return s.err
	}
	return err
}

// LoadEvents reads a session file. Lines that do not parse — a torn last
// line from a process killed mid-write — are skipped.
func LoadEvents(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	var events []Event
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var e Event
			if json.Unmarshal(line, &e) == nil && e.Type != "" {
				events = append(events, e)
			}
		}
		if err == io.EOF {
			return events, nil
		}
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", path, err)
		}
	}
}

// Rebuild turns a session's events back into the conversation they record.
// A reply's blocks run from its first block event to its usage event; the
// tool results that follow form one user message.
func Rebuild(events []Event) []Message {
	var msgs []Message
	const (
		none = iota
		inReply
		inResults
	)
	state := none
	addTo := func(role string, want int, b Block) {
		if state != want || len(msgs) == 0 {
			msgs = append(msgs, Message{Role: role})
			state = want
		}
		msgs[len(msgs)-1].Content = append(msgs[len(msgs)-1].Content, b)
	}
	for _, e := range events {
		switch e.Type {
		case EventUser:
			msgs = append(msgs, Message{Role: RoleUser, Content: []Block{{Type: BlockText, Text: e.Text}}})
			state = none
		case EventText:
			addTo(RoleAssistant, inReply, Block{Type: BlockText, Text: e.Text})
		case EventThinking:
			addTo(RoleAssistant, inReply, Block{Type: BlockThinking, Text: e.Text, Signature: e.Signature})
		case EventRedactedThinking:
			addTo(RoleAssistant, inReply, Block{Type: BlockRedactedThinking, Data: e.Data})
		case EventToolCall:
			addTo(RoleAssistant, inReply, Block{Type: BlockToolUse, ID: e.ID, Name: e.Name, Input: e.Input})
		case EventUsage:
			if state == inReply {
				state = none
			} else {
				// A reply with no blocks still is a reply: keep the
				// alternation of roles as it was on the wire.
				msgs = append(msgs, Message{Role: RoleAssistant})
				state = none
			}
		case EventToolResult:
			addTo(RoleUser, inResults, Block{Type: BlockToolResult, ID: e.ID, Text: e.Text, IsError: e.IsError})
		}
	}
	return msgs
}

// SessionInfo describes a session file.
type SessionInfo struct {
	Path    string
	Head    Event
	ModTime time.Time
}

// FindSession finds the session to resume: the one with id, or with id
// empty, the most recently written one of workspace.
func FindSession(dir, workspace, id string) (string, error) {
	if id != "" {
		if strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
			return "", fmt.Errorf("no session %q", id)
		}
		path := filepath.Join(dir, strings.TrimSuffix(id, ".jsonl")+".jsonl")
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("no session %q in %s", id, dir)
		}
		return path, nil
	}
	infos, err := ListSessions(dir)
	if err != nil {
		return "", err
	}
	for _, in := range infos {
		if in.Head.Workspace == workspace {
			return in.Path, nil
		}
	}
	return "", fmt.Errorf("no session to continue for workspace %s", workspace)
}

// ListSessions returns the sessions in dir, most recently written first.
func ListSessions(dir string) ([]SessionInfo, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	var infos []SessionInfo
	for _, de := range entries {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		path := filepath.Join(dir, de.Name())
		st, err := de.Info()
		if err != nil {
			continue
		}
		head, ok := readHead(path)
		if !ok {
			continue
		}
		infos = append(infos, SessionInfo{Path: path, Head: head, ModTime: st.ModTime()})
	}
	sort.SliceStable(infos, func(i, j int) bool {
		if !infos[i].ModTime.Equal(infos[j].ModTime) {
			return infos[i].ModTime.After(infos[j].ModTime)
		}
		return infos[i].Path > infos[j].Path
	})
	return infos, nil
}

func readHead(path string) (Event, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Event{}, false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadBytes('\n')
	var e Event
	if json.Unmarshal(line, &e) != nil || e.Type != EventSession {
		return Event{}, false
	}
	return e, true
}

package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"corral/agent/fakeapi"
	"corral/tools"
)

// TestSessionRebuildsTheConversation records a run with several replies,
// thinking and tool calls, and checks that the file rebuilds exactly the
// conversation the loop had.
func TestSessionRebuildsTheConversation(t *testing.T) {
	srv := fakeapi.NewAnthropic(t,
		fakeapi.Reply("tool_use", fakeapi.Thinking("think", "sig"), fakeapi.Text("a"), fakeapi.ToolUse("c1", "read_file", `{"path":"x"}`), fakeapi.ToolUse("c2", "run_bash", `{"command":"ls"}`)),
		fakeapi.Reply("pause_turn", fakeapi.Text("b")),
		fakeapi.Reply("end_turn", fakeapi.Text("c")),
	)
	dir := t.TempDir()
	sess, err := NewSession(dir, "/ws", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	ex := &fakeExecutor{results: map[string]tools.Result{"run_bash": {Text: "boom", IsError: true}}}
	l := newTestLoop(kinds[0].provider(srv), ex, sess, &noSleep{})
	msgs, err := l.Run(context.Background(), nil, "task")
	if err != nil {
		t.Fatal(err)
	}
	sess.Close()

	events, err := LoadEvents(sess.Path)
	if err != nil {
		t.Fatal(err)
	}
	if events[0].Type != EventSession || events[0].Workspace != "/ws" {
		t.Errorf("first event %+v", events[0])
	}
	got := Rebuild(events)
	if !reflect.DeepEqual(normalise(got), normalise(msgs)) {
		a, _ := json.MarshalIndent(got, "", " ")
		b, _ := json.MarshalIndent(msgs, "", " ")
		t.Errorf("rebuilt:\n%s\nwant:\n%s", a, b)
	}
}

// normalise makes nil and empty slices compare equal.
func normalise(msgs []Message) string {
	b, _ := json.Marshal(msgs)
	return string(b)
}

func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	sess, err := NewSession(dir, "/ws", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	sess.Event(Event{Type: EventUser, Text: "hello"})
	sess.Event(Event{Type: EventToolCall, ID: "c1", Name: "read_file", Input: json.RawMessage(`{"path":"a"}`)})
	sess.Close()
	f, _ := os.OpenFile(sess.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"tool_result","id":"c1","te`)
	f.Close()

	s2, events, err := OpenSession(sess.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 {
		t.Fatalf("%d events, want 3 (the torn line skipped)", len(events))
	}
	// Appending after a torn line must not glue the new event to it.
	s2.Event(Event{Type: EventToolResult, ID: "c1", Text: InterruptedText, IsError: true})
	s2.Close()
	events, err = LoadEvents(sess.Path)
	if err != nil {
		t.Fatal(err)
	}
	msgs, tail := Repair(Rebuild(events))
	if len(events) != 4 || len(tail) != 0 || len(msgs) != 3 {
		t.Errorf("events %d, messages %+v", len(events), msgs)
	}
}

func TestFindSession(t *testing.T) {
	dir := t.TempDir()
	mk := func(ws string, age time.Duration) string {
		s, err := NewSession(dir, ws, "anthropic", "m")
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		when := time.Now().Add(-age)
		os.Chtimes(s.Path, when, when)
		return s.Path
	}
	oldA := mk("/a", 3*time.Hour)
	newA := mk("/a", time.Hour)
	b := mk("/b", 0)
	cases := []struct {
		name, ws, id, want string
		wantErr            bool
	}{
		{"newest of the workspace", "/a", "", newA, false},
		{"other workspace", "/b", "", b, false},
		{"by id", "/zzz", filepath.Base(oldA[:len(oldA)-len(".jsonl")]), oldA, false},
		{"no session here", "/c", "", "", true},
		{"unknown id", "/a", "nope", "", true},
		{"id with a path", "/a", "../x", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := FindSession(dir, c.ws, c.id)
			if (err != nil) != c.wantErr || got != c.want {
				t.Errorf("FindSession = %q, %v; want %q (error %v)", got, err, c.want, c.wantErr)
			}
		})
	}
}

func TestStateDirOverride(t *testing.T) {
	t.Setenv("CORRAL_STATE_DIR", "/tmp/corral-state-test")
	d, err := StateDir()
	if err != nil || d != "/tmp/corral-state-test" {
		t.Errorf("StateDir = %q, %v", d, err)
	}
}

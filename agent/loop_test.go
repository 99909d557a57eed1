package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/agent/fakeapi"
	"corral/tools"
)

// fakeExecutor records tool calls and answers them from a table.
type fakeExecutor struct {
	mu      sync.Mutex
	calls   []string // name + " " + args
	results map[string]tools.Result
	// onRun, when set, runs inside each call (to interrupt, for example).
	onRun func(ctx context.Context, name string)
}

func (f *fakeExecutor) Run(ctx context.Context, name string, args json.RawMessage) tools.Result {
	f.mu.Lock()
	f.calls = append(f.calls, name+" "+string(args))
	f.mu.Unlock()
	if f.onRun != nil {
		f.onRun(ctx, name)
	}
	if r, ok := f.results[name]; ok {
		return r
	}
	return tools.Result{Text: "ok: " + name}
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Event(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Stored() {
			out = append(out, e.Type)
		}
	}
	return out
}

func (r *recorder) joined(typ string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.events {
		if e.Type == typ {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

var testDefs = []tools.Definition{
	{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "list_files", Description: "List files.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	{Name: "edit_file", Description: "Edit a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"old_text":{"type":"string"},"new_text":{"type":"string"}},"required":["path","new_text"]}`)},
	{Name: "run_bash", Description: "Run a command.", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
}

// noSleep records the delays the loop asked for instead of waiting.
type noSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (n *noSleep) sleep(ctx context.Context, d time.Duration) error {
	n.mu.Lock()
	n.delays = append(n.delays, d)
	n.mu.Unlock()
	return ctx.Err()
}

type kind struct {
	name     string
	start    func(t testing.TB, steps ...fakeapi.Step) *fakeapi.Server
	provider func(s *fakeapi.Server) Provider
}

var kinds = []kind{
	{"anthropic", fakeapi.NewAnthropic, func(s *fakeapi.Server) Provider {
		return NewAnthropic(AnthropicConfig{APIKey: "sk-ant-test", BaseURL: s.URL, Model: "claude-test"})
	}},
	{"openai", fakeapi.NewOpenAI, func(s *fakeapi.Server) Provider {
		return NewOpenAI(OpenAIConfig{APIKey: "sk-openai-test", BaseURL: s.URL + "/v1", Model: "gpt-test"})
	}},
}

func newTestLoop(p Provider, ex Executor, rec Sink, ns *noSleep) *Loop {
	return &Loop{Provider: p, Tools: ex, Definitions: testDefs, System: "You are a test.", Retry: RetryPolicy{Sleep: ns.sleep}, Sink: rec}
}

func TestLoopAllFourTools(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := k.start(t,
				fakeapi.Reply("tool_use", fakeapi.Thinking("Let me look.", "sig-1"), fakeapi.Text("Looking."),
					fakeapi.ToolUse("call_1", "read_file", `{"path":"a.go"}`),
					fakeapi.ToolUse("call_2", "list_files", `{"path":"."}`)),
				fakeapi.Reply("tool_use",
					fakeapi.ToolUse("call_3", "edit_file", `{"path":"a.go","old_text":"x","new_text":"y"}`),
					fakeapi.ToolUse("call_4", "run_bash", `{"command":"go test ./..."}`)),
				fakeapi.Reply("end_turn", fakeapi.Text("All done.")),
			)
			ex := &fakeExecutor{results: map[string]tools.Result{
				"read_file": {Text: "package a\n"},
				"run_bash":  {Text: "FAIL", IsError: true},
			}}
			rec := &recorder{}
			l := newTestLoop(k.provider(srv), ex, rec, &noSleep{})
			msgs, err := l.Run(context.Background(), nil, "fix it")
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			wantCalls := []string{
				`read_file {"path":"a.go"}`,
				`list_files {"path":"."}`,
				`edit_file {"path":"a.go","old_text":"x","new_text":"y"}`,
				`run_bash {"command":"go test ./..."}`,
			}
			if strings.Join(ex.calls, "\n") != strings.Join(wantCalls, "\n") {
				t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(ex.calls, "\n"), strings.Join(wantCalls, "\n"))
			}
			if got := rec.joined(EventTextDelta); got != "Looking.All done." {
				t.Errorf("streamed text %q", got)
			}
			if got := rec.joined(EventThinkingDelta); got != "Let me look." {
				t.Errorf("streamed thinking %q", got)
			}
			if len(msgs) != 6 {
				t.Fatalf("conversation has %d messages, want 6: %+v", len(msgs), msgs)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			// Every result of one reply goes back together.
			body := reqs[2].JSON()
			wire, _ := json.Marshal(body["messages"])
			switch k.name {
			case "anthropic":
				var m struct {
					Messages []struct {
						Role    string `json:"role"`
						Content []struct {
							Type      string `json:"type"`
							ToolUseID string `json:"tool_use_id"`
							IsError   bool   `json:"is_error"`
						} `json:"content"`
					} `json:"messages"`
				}
				json.Unmarshal(reqs[2].Body, &m)
				last := m.Messages[len(m.Messages)-1]
				if last.Role != "user" || len(last.Content) != 2 || last.Content[0].ToolUseID != "call_3" || last.Content[1].ToolUseID != "call_4" || !last.Content[1].IsError || last.Content[0].IsError {
					t.Errorf("last message %+v", last)
				}
				if !strings.Contains(string(wire), `"signature":"sig-1"`) {
					t.Errorf("thinking signature not sent back: %s", wire)
				}
			case "openai":
				var m struct {
					Messages []struct {
						Role       string `json:"role"`
						Content    any    `json:"content"`
						ToolCallID string `json:"tool_call_id"`
					} `json:"messages"`
				}
				json.Unmarshal(reqs[2].Body, &m)
				n := len(m.Messages)
				if n < 2 || m.Messages[n-2].ToolCallID != "call_3" || m.Messages[n-1].ToolCallID != "call_4" {
					t.Fatalf("tool messages: %+v", m.Messages)
				}
				if s, _ := m.Messages[n-1].Content.(string); !strings.HasPrefix(s, "ERROR: FAIL") {
					t.Errorf("error result %q lacks the ERROR: prefix", s)
				}
				if s, _ := m.Messages[n-2].Content.(string); s != "ok: edit_file" {
					t.Errorf("result %q", s)
				}
			}
			types := strings.Join(rec.types(), " ")
			want := "user thinking text tool_call tool_call usage tool_result tool_result tool_call tool_call usage tool_result tool_result text usage done"
			if types != want {
				t.Errorf("events:\n%s\nwant:\n%s", types, want)
			}
		})
	}
}

func TestStopReasons(t *testing.T) {
	cases := []struct {
		name       string
		steps      []fakeapi.Step
		wantStatus string // "" means finished
		wantCalls  []string
		wantReqs   int
	}{
		{
			name:     "end_turn",
			steps:    []fakeapi.Step{fakeapi.Reply("end_turn", fakeapi.Text("hi"))},
			wantReqs: 1,
		},
		{
			name: "max_tokens with a cut-off call runs only the complete one",
			steps: []fakeapi.Step{
				fakeapi.Reply("max_tokens", fakeapi.ToolUse("c1", "read_file", `{"path":"a"}`), fakeapi.ToolUse("c2", "edit_file", `{"path":"a","new_te`)),
				fakeapi.Reply("end_turn", fakeapi.Text("ok")),
			},
			wantCalls: []string{`read_file {"path":"a"}`},
			wantReqs:  2,
		},
		{
			name:       "max_tokens without calls stops",
			steps:      []fakeapi.Step{fakeapi.Reply("max_tokens", fakeapi.Text("a very long"))},
			wantStatus: StatusMaxTokens,
			wantReqs:   1,
		},
		{
			name:       "refusal stops without running calls",
			steps:      []fakeapi.Step{fakeapi.Reply("refusal", fakeapi.Text("no"))},
			wantStatus: StatusRefused,
			wantReqs:   1,
		},
	}
	for _, k := range kinds {
		for _, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				srv := k.start(t, c.steps...)
				ex := &fakeExecutor{}
				rec := &recorder{}
				msgs, err := newTestLoop(k.provider(srv), ex, rec, &noSleep{}).Run(context.Background(), nil, "go")
				var re *RunError
				switch {
				case c.wantStatus == "" && err != nil:
					t.Fatalf("Run: %v", err)
				case c.wantStatus != "" && (!errors.As(err, &re) || re.Status != c.wantStatus):
					t.Fatalf("Run error %v, want status %s", err, c.wantStatus)
				}
				if strings.Join(ex.calls, "\n") != strings.Join(c.wantCalls, "\n") {
					t.Errorf("calls %q, want %q", ex.calls, c.wantCalls)
				}
				if n := len(srv.Requests()); n != c.wantReqs {
					t.Errorf("%d requests, want %d", n, c.wantReqs)
				}
				if _, tail := Repair(msgs); len(tail) != 0 {
					t.Errorf("conversation left calls without results: %+v", tail)
				}
			})
		}
	}
}

func TestPauseTurnContinues(t *testing.T) {
	srv := fakeapi.NewAnthropic(t,
		fakeapi.Reply("pause_turn", fakeapi.Text("working")),
		fakeapi.Reply("end_turn", fakeapi.Text(" done")),
	)
	rec := &recorder{}
	_, err := newTestLoop(kinds[0].provider(srv), &fakeExecutor{}, rec, &noSleep{}).Run(context.Background(), nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs := reqs[1].JSON()["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "assistant" {
		t.Errorf("after pause_turn the paused reply goes back as the last message; got role %v", last["role"])
	}
}

func TestRetry(t *testing.T) {
	ok := fakeapi.Reply("end_turn", fakeapi.Text("fine"))
	cases := []struct {
		name       string
		first      fakeapi.Step
		wantDelays []time.Duration // nil: only check one delay happened
	}{
		{"429 with Retry-After", fakeapi.Step{Status: 429, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, Header: map[string]string{"Retry-After": "7"}}, []time.Duration{7 * time.Second}},
		{"529 overloaded", fakeapi.Error(529, "overloaded_error", "Overloaded"), nil},
		{"500", fakeapi.Error(500, "api_error", "boom"), nil},
		{"dropped connection", fakeapi.Step{Blocks: []fakeapi.Block{fakeapi.Text("partial text")}, Drop: true}, nil},
		{"overloaded inside the stream", fakeapi.Step{Blocks: []fakeapi.Block{fakeapi.Text("partial text")}, StreamError: "overloaded_error"}, nil},
	}
	for _, k := range kinds {
		for _, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				srv := k.start(t, c.first, ok)
				ns := &noSleep{}
				rec := &recorder{}
				_, err := newTestLoop(k.provider(srv), &fakeExecutor{}, rec, ns).Run(context.Background(), nil, "go")
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if n := len(srv.Requests()); n != 2 {
					t.Errorf("%d requests, want 2", n)
				}
				if len(ns.delays) != 1 {
					t.Fatalf("delays %v, want one", ns.delays)
				}
				if c.wantDelays != nil && ns.delays[0] != c.wantDelays[0] {
					t.Errorf("delay %v, want %v (Retry-After)", ns.delays[0], c.wantDelays[0])
				}
				if !strings.Contains(strings.Join(rec.types(), " "), "retry") {
					t.Errorf("no retry event: %v", rec.types())
				}
			})
		}
	}
}

func TestRetryGivesUp(t *testing.T) {
	var steps []fakeapi.Step
	for range 4 {
		steps = append(steps, fakeapi.Error(503, "api_error", "down"))
	}
	srv := fakeapi.NewAnthropic(t, steps...)
	ns := &noSleep{}
	l := newTestLoop(kinds[0].provider(srv), &fakeExecutor{}, &recorder{}, ns)
	l.Retry.MaxRetries = 3
	_, err := l.Run(context.Background(), nil, "go")
	var re *RunError
	if !errors.As(err, &re) || re.Status != StatusAPIError {
		t.Fatalf("err %v, want an API error", err)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
	// Backoff grows.
	if len(ns.delays) != 3 || !(ns.delays[2] > ns.delays[0]) {
		t.Errorf("delays %v do not back off", ns.delays)
	}
}

func TestFatal400(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := k.start(t, fakeapi.Error(400, "invalid_request_error", "messages: the model does not exist"))
			ns := &noSleep{}
			_, err := newTestLoop(k.provider(srv), &fakeExecutor{}, &recorder{}, ns).Run(context.Background(), nil, "go")
			if err == nil || !strings.Contains(err.Error(), "the model does not exist") {
				t.Fatalf("err %v, want the API's own message", err)
			}
			if n := len(srv.Requests()); n != 1 || len(ns.delays) != 0 {
				t.Errorf("%d requests, %d delays: a 400 must fail at once", n, len(ns.delays))
			}
		})
	}
}

func TestTurnLimit(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			var steps []fakeapi.Step
			for i := range 5 {
				steps = append(steps, fakeapi.Reply("tool_use", fakeapi.ToolUse("c"+string(rune('a'+i)), "list_files", `{}`)))
			}
			srv := k.start(t, steps...)
			l := newTestLoop(k.provider(srv), &fakeExecutor{}, &recorder{}, &noSleep{})
			l.MaxTurns = 3
			msgs, err := l.Run(context.Background(), nil, "loop forever")
			var re *RunError
			if !errors.As(err, &re) || re.Status != StatusMaxTurns {
				t.Fatalf("err %v, want max_turns", err)
			}
			if n := len(srv.Requests()); n != 3 {
				t.Errorf("%d requests, want 3", n)
			}
			if _, tail := Repair(msgs); len(tail) != 0 {
				t.Errorf("calls left without results")
			}
		})
	}
}

func TestInterruptDuringToolsRepairs(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := k.start(t,
				fakeapi.Reply("tool_use", fakeapi.ToolUse("c1", "run_bash", `{"command":"sleep 100"}`), fakeapi.ToolUse("c2", "read_file", `{"path":"a"}`)),
				fakeapi.Reply("end_turn", fakeapi.Text("ok")),
			)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ex := &fakeExecutor{onRun: func(ctx context.Context, name string) { cancel() }}
			l := newTestLoop(k.provider(srv), ex, &recorder{}, &noSleep{})
			msgs, err := l.Run(ctx, nil, "go")
			var re *RunError
			if !errors.As(err, &re) || re.Status != StatusInterrupted {
				t.Fatalf("err %v, want interrupted", err)
			}
			if len(ex.calls) != 1 {
				t.Errorf("calls after the interrupt ran: %v", ex.calls)
			}
			last := msgs[len(msgs)-1]
			if len(last.Content) != 2 || !strings.HasPrefix(last.Content[0].Text, InterruptedText) || last.Content[1].Text != InterruptedText {
				t.Fatalf("results %+v", last.Content)
			}
			// The next turn is accepted: every call has its result.
			if _, err := l.Run(context.Background(), msgs, "carry on"); err != nil {
				t.Fatalf("next turn: %v", err)
			}
			body := string(srv.Requests()[1].Body)
			if strings.Count(body, InterruptedText) != 2 || !strings.Contains(body, "carry on") {
				t.Errorf("next request lacks the repaired results: %s", body)
			}
		})
	}
}

func TestToolPanicBecomesAResult(t *testing.T) {
	srv := fakeapi.NewAnthropic(t,
		fakeapi.Reply("tool_use", fakeapi.ToolUse("c1", "read_file", `{"path":"a"}`)),
		fakeapi.Reply("end_turn", fakeapi.Text("ok")),
	)
	ex := &fakeExecutor{onRun: func(context.Context, string) { panic("TODO") }}
	if _, err := newTestLoop(kinds[0].provider(srv), ex, &recorder{}, &noSleep{}).Run(context.Background(), nil, "go"); err != nil {
		t.Fatal(err)
	}
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, "Internal error in read_file: TODO") {
		t.Errorf("the panic did not become a result: %s", body)
	}
}

func TestInterruptDuringRequest(t *testing.T) {
	srv := fakeapi.NewAnthropic(t, fakeapi.Step{Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-srv.Reached
		cancel()
	}()
	_, err := newTestLoop(kinds[0].provider(srv), &fakeExecutor{}, &recorder{}, &noSleep{}).Run(ctx, nil, "go")
	var re *RunError
	if !errors.As(err, &re) || re.Status != StatusInterrupted {
		t.Fatalf("err %v, want interrupted", err)
	}
}

func TestRepairDanglingCalls(t *testing.T) {
	use := func(id string) Block {
		return Block{Type: BlockToolUse, ID: id, Name: "read_file", Input: json.RawMessage(`{}`)}
	}
	res := func(id string) Block { return Block{Type: BlockToolResult, ID: id, Text: "r"} }
	text := func(s string) Block { return Block{Type: BlockText, Text: s} }
	cases := []struct {
		name     string
		in       []Message
		wantTail int
		want     string // roles and block types of the result
	}{
		{"no calls", []Message{{RoleUser, []Block{text("a")}}, {RoleAssistant, []Block{text("b")}}}, 0, "user[text] assistant[text]"},
		{"dangling at the end", []Message{{RoleUser, []Block{text("a")}}, {RoleAssistant, []Block{use("1"), use("2")}}}, 2, "user[text] assistant[tool_use tool_use] user[tool_result tool_result]"},
		{"one of two answered", []Message{{RoleUser, []Block{text("a")}}, {RoleAssistant, []Block{use("1"), use("2")}}, {RoleUser, []Block{res("1")}}}, 1, "user[text] assistant[tool_use tool_use] user[tool_result tool_result]"},
		{"answered by a prompt", []Message{{RoleUser, []Block{text("a")}}, {RoleAssistant, []Block{use("1")}}, {RoleUser, []Block{text("next")}}}, 0, "user[text] assistant[tool_use] user[tool_result text]"},
		{"orphan result dropped", []Message{{RoleUser, []Block{text("a"), res("9")}}}, 0, "user[text]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, tail := Repair(c.in)
			var parts []string
			for _, m := range out {
				var ts []string
				for _, b := range m.Content {
					ts = append(ts, b.Type)
				}
				parts = append(parts, m.Role+"["+strings.Join(ts, " ")+"]")
			}
			if got := strings.Join(parts, " "); got != c.want {
				t.Errorf("got %s\nwant %s", got, c.want)
			}
			if len(tail) != c.wantTail {
				t.Errorf("tail %d, want %d", len(tail), c.wantTail)
			}
		})
	}
}

func TestCacheBreakpointsOnTheWire(t *testing.T) {
	srv := fakeapi.NewAnthropic(t,
		fakeapi.Reply("tool_use", fakeapi.ToolUse("c1", "read_file", `{"path":"a"}`)),
		fakeapi.Reply("end_turn", fakeapi.Text("ok")),
	)
	rec := &recorder{}
	if _, err := newTestLoop(kinds[0].provider(srv), &fakeExecutor{}, rec, &noSleep{}).Run(context.Background(), nil, "go"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	type wire struct {
		System   json.RawMessage `json:"system"`
		Tools    json.RawMessage `json:"tools"`
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	var a, b wire
	json.Unmarshal(reqs[0].Body, &a)
	json.Unmarshal(reqs[1].Body, &b)
	if string(a.System) != string(b.System) || string(a.Tools) != string(b.Tools) {
		t.Errorf("system and tools differ between requests; the cached prefix must be byte-identical")
	}
	if !strings.Contains(string(a.System), `"cache_control":{"type":"ephemeral"}`) {
		t.Errorf("no breakpoint after the system prompt: %s", a.System)
	}
	for i, w := range []wire{a, b} {
		msgs := w.Messages
		lastMsg := msgs[len(msgs)-1].Content
		if _, ok := lastMsg[len(lastMsg)-1]["cache_control"]; !ok {
			t.Errorf("request %d: no breakpoint on the history: %v", i+1, lastMsg)
		}
		if n := strings.Count(string(reqs[i].Body), `"cache_control"`); n != 2 {
			t.Errorf("request %d has %d breakpoints, want 2", i+1, n)
		}
	}
	// Usage reports cache reads and writes.
	for _, e := range rec.events {
		if e.Type == EventUsage && (e.Usage.CacheReadTokens != 3 || e.Usage.CacheWriteTokens != 2) {
			t.Errorf("usage %+v lacks cache tokens", e.Usage)
		}
	}
}

func TestCredentialsStayWithTheirProvider(t *testing.T) {
	// The environment holds both keys; each provider must send only the
	// one it was given.
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-env")
	t.Setenv("OPENAI_API_KEY", "sk-openai-env")
	ant := fakeapi.NewAnthropic(t, fakeapi.Reply("end_turn", fakeapi.Text("a")))
	oai := fakeapi.NewOpenAI(t, fakeapi.Reply("end_turn", fakeapi.Text("b")))
	for _, p := range []Provider{
		NewAnthropic(AnthropicConfig{APIKey: "sk-ant-cfg", BaseURL: ant.URL}),
		NewOpenAI(OpenAIConfig{APIKey: "sk-openai-cfg", BaseURL: oai.URL + "/v1"}),
	} {
		if _, err := newTestLoop(p, &fakeExecutor{}, &recorder{}, &noSleep{}).Run(context.Background(), nil, "hi"); err != nil {
			t.Fatal(err)
		}
	}
	dump := func(r fakeapi.Request) string {
		var b strings.Builder
		r.Header.Write(&b)
		return b.String() + string(r.Body)
	}
	a, o := dump(ant.Requests()[0]), dump(oai.Requests()[0])
	if ant.Requests()[0].Header.Get("X-Api-Key") != "sk-ant-cfg" {
		t.Errorf("anthropic key header %q", ant.Requests()[0].Header.Get("X-Api-Key"))
	}
	if oai.Requests()[0].Header.Get("Authorization") != "Bearer sk-openai-cfg" {
		t.Errorf("openai auth header %q", oai.Requests()[0].Header.Get("Authorization"))
	}
	for _, leak := range []string{"sk-openai", "sk-ant-env"} {
		if strings.Contains(a, leak) {
			t.Errorf("the Anthropic server saw %s", leak)
		}
	}
	for _, leak := range []string{"sk-ant", "sk-openai-env"} {
		if strings.Contains(o, leak) {
			t.Errorf("the OpenAI server saw %s", leak)
		}
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	other := fakeapi.NewAnthropic(t, fakeapi.Reply("end_turn", fakeapi.Text("stolen")))
	srv := fakeapi.NewAnthropic(t, fakeapi.Step{Status: http.StatusTemporaryRedirect, Header: map[string]string{"Location": other.URL + "/v1/messages"}})
	_, err := newTestLoop(NewAnthropic(AnthropicConfig{APIKey: "sk-ant-secret", BaseURL: srv.URL}), &fakeExecutor{}, &recorder{}, &noSleep{}).Run(context.Background(), nil, "hi")
	if err == nil {
		t.Fatal("a redirect was followed")
	}
	if n := len(other.Requests()); n != 0 {
		t.Errorf("the redirect target got %d requests (with the key)", n)
	}
}

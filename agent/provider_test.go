package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"corral/agent/fakeapi"
)

func openAIProviderFor(s *fakeapi.Server) Provider {
	return NewOpenAI(OpenAIConfig{APIKey: "k", BaseURL: s.URL + "/v1", Model: "m"})
}

func TestOpenAIMaxTokensFallback(t *testing.T) {
	srv := fakeapi.NewOpenAI(t,
		fakeapi.Error(400, "invalid_request_error", "Unrecognized request argument supplied: max_completion_tokens"),
		fakeapi.Reply("end_turn", fakeapi.Text("ok")),
		fakeapi.Reply("end_turn", fakeapi.Text("again")),
	)
	ns := &noSleep{}
	l := newTestLoop(openAIProviderFor(srv), &fakeExecutor{}, &recorder{}, ns)
	for _, prompt := range []string{"one", "two"} {
		if _, err := l.Run(context.Background(), nil, prompt); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	has := func(i int, key string) bool { _, ok := reqs[i].JSON()[key]; return ok }
	if !has(0, "max_completion_tokens") || has(0, "max_tokens") {
		t.Errorf("first request should send max_completion_tokens: %s", reqs[0].Body)
	}
	for i := 1; i < 3; i++ {
		if has(i, "max_completion_tokens") || !has(i, "max_tokens") {
			t.Errorf("request %d should send max_tokens: %s", i+1, reqs[i].Body)
		}
	}
	if len(ns.delays) != 0 {
		t.Errorf("the switch should not wait: %v", ns.delays)
	}
}

func TestOpenAIStreamOptionsFallback(t *testing.T) {
	srv := fakeapi.NewOpenAI(t,
		fakeapi.Error(400, "invalid_request_error", "unknown field: stream_options"),
		fakeapi.Reply("end_turn", fakeapi.Text("ok")),
	)
	if _, err := newTestLoop(openAIProviderFor(srv), &fakeExecutor{}, &recorder{}, &noSleep{}).Run(context.Background(), nil, "go"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if _, ok := reqs[1].JSON()["stream_options"]; ok || len(reqs) != 2 {
		t.Errorf("the retry still sends stream_options: %s", reqs[1].Body)
	}
}

func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}` + "\n\n"
}

func TestOpenAICompatibleQuirks(t *testing.T) {
	cases := []struct {
		name      string
		raw       []string
		wantCalls []string
		wantText  string
		wantThink string
	}{
		{
			name: "calls without IDs, all at index 0, and finish stop",
			raw: []string{
				chunk(`{"role":"assistant","tool_calls":[{"index":0,"function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"id":"second","function":{"name":"list_files","arguments":"{}"}}]}`, ""),
				chunk(`{}`, "stop"),
				"data: [DONE]\n\n",
			},
			wantCalls: []string{`read_file {"path":"a"}`, `list_files {}`},
		},
		{
			name: "reasoning field and no usage",
			raw: []string{
				chunk(`{"role":"assistant","reasoning":"hm"}`, ""),
				chunk(`{"content":"hello"}`, ""),
				chunk(`{}`, "stop"),
				"data: [DONE]\n\n",
			},
			wantText:  "hello",
			wantThink: "hm",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := fakeapi.NewOpenAI(t, fakeapi.Step{Raw: c.raw}, fakeapi.Reply("end_turn", fakeapi.Text("end")))
			ex := &fakeExecutor{}
			rec := &recorder{}
			msgs, err := newTestLoop(openAIProviderFor(srv), ex, rec, &noSleep{}).Run(context.Background(), nil, "go")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(ex.calls, "|") != strings.Join(c.wantCalls, "|") {
				t.Errorf("calls %q, want %q", ex.calls, c.wantCalls)
			}
			if c.wantText != "" && !strings.HasPrefix(rec.joined(EventText), c.wantText) {
				t.Errorf("text %q", rec.joined(EventText))
			}
			if got := rec.joined(EventThinking); got != c.wantThink {
				t.Errorf("thinking %q, want %q", got, c.wantThink)
			}
			// Every call has an ID its result can answer.
			for _, m := range msgs {
				for _, b := range m.Content {
					if (b.Type == BlockToolUse || b.Type == BlockToolResult) && b.ID == "" {
						t.Errorf("block without ID: %+v", b)
					}
				}
			}
		})
	}
}

// TestMalformedReplies feeds both clients replies no server should send:
// each must end as an error or a reply, never a panic.
func TestMalformedReplies(t *testing.T) {
	anthropicCases := [][]string{
		{"data: {not json\n\n"},
		{"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":5,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"},
		{"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
		{"event: message_start\ndata: {\"type\":\"message_start\",\"message\":null}\n\n", "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0}\n\n", "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
		{"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\n", "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"read_file\",\"input\":{}}}\n\n", "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"[1,\"}}\n\n", "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n", "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
		{"event: error\ndata: not json\n\n"},
		{},
	}
	openAICases := [][]string{
		{"data: {not json\n\n"},
		{chunk(`{"tool_calls":[{"index":-3,"function":{"arguments":"{"}}]}`, "tool_calls"), "data: [DONE]\n\n"},
		{chunk(`{"tool_calls":[{"index":99999999999,"id":"a"}]}`, "tool_calls"), "data: [DONE]\n\n"},
		{`data: {"id":"x","choices":null}` + "\n\n", "data: [DONE]\n\n"},
		{`data: {"error":"plain string"}` + "\n\n"},
		{"data: [DONE]\n\n"},
		{},
	}
	run := func(t *testing.T, srv *fakeapi.Server, p Provider) {
		l := newTestLoop(p, &fakeExecutor{}, &recorder{}, &noSleep{})
		l.Retry.MaxRetries = 1
		l.MaxTurns = 3
		msgs, _ := l.Run(context.Background(), nil, "go")
		if _, tail := Repair(msgs); len(tail) != 0 {
			t.Errorf("conversation left invalid: %+v", msgs)
		}
	}
	for i, raw := range anthropicCases {
		srv := fakeapi.NewAnthropic(t, fakeapi.Step{Raw: raw}, fakeapi.Step{Raw: raw}, fakeapi.Reply("end_turn"))
		t.Run("anthropic/"+string(rune('a'+i)), func(t *testing.T) { run(t, srv, kinds[0].provider(srv)) })
	}
	for i, raw := range openAICases {
		srv := fakeapi.NewOpenAI(t, fakeapi.Step{Raw: raw}, fakeapi.Step{Raw: raw}, fakeapi.Reply("end_turn"))
		t.Run("openai/"+string(rune('a'+i)), func(t *testing.T) { run(t, srv, openAIProviderFor(srv)) })
	}
}

func TestAnthropicAuthToken(t *testing.T) {
	srv := fakeapi.NewAnthropic(t, fakeapi.Reply("end_turn", fakeapi.Text("ok")))
	p := NewAnthropic(AnthropicConfig{AuthToken: "tok-123", BaseURL: srv.URL})
	if _, err := newTestLoop(p, &fakeExecutor{}, &recorder{}, &noSleep{}).Run(context.Background(), nil, "hi"); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if h.Get("Authorization") != "Bearer tok-123" || h.Get("X-Api-Key") != "" {
		t.Errorf("headers %v", h)
	}
}

func TestToolLine(t *testing.T) {
	cases := []struct {
		name, tool, input, result string
		isError                   bool
		want                      string
	}{
		{"read", "read_file", `{"path":"src/x.go"}`, strings.Repeat("a", 812), false, "● read src/x.go (812 chars)"},
		{"list", "list_files", `{}`, "a\nb\nc\n", false, "● list . (3 entries)"},
		{"edit", "edit_file", `{"path":"a.go"}`, "Edited a.go: 1 replacement.", false, "● edit a.go Edited a.go: 1 replacement."},
		{"run failed", "run_bash", `{"command":"go test ./...\necho"}`, "exit 1\nFAIL", true, "✗ run go test ./... …: exit 1 …"},
		{"bad input", "read_file", `not json`, "x", true, "✗ read : x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ToolLine(c.tool, json.RawMessage(c.input), c.result, c.isError); got != c.want {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestPrinterKeepsStdoutForTheAnswer(t *testing.T) {
	var out, errb strings.Builder
	p := &Printer{Out: &out, Err: &errb}
	for _, e := range []Event{
		{Type: EventSession, Session: "s-1"},
		{Type: EventUser, Text: "task"},
		{Type: EventThinkingDelta, Text: "hmm"},
		{Type: EventTextDelta, Text: "Hel"},
		{Type: EventTextDelta, Text: "lo"},
		{Type: EventToolCall, ID: "1", Name: "read_file", Input: json.RawMessage(`{"path":"a"}`)},
		{Type: EventToolResult, ID: "1", Text: "abc"},
		{Type: EventTextDelta, Text: "Done."},
		{Type: EventDone, Status: StatusFinished, Turns: 2, Usage: &Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 3, CacheWriteTokens: 2}},
	} {
		p.Event(e)
	}
	if out.String() != "Hello\nDone.\n" {
		t.Errorf("stdout %q", out.String())
	}
	if errb.String() != "✻ hmm\n● read a (3 chars)\n─ 2 turns · tokens: 10 in, 5 out, 3 cache read, 2 cache write · session s-1\n" {
		t.Errorf("stderr %q", errb.String())
	}
}

func TestStalledStreamIsRetried(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := k.start(t, fakeapi.Step{Hang: true}, fakeapi.Reply("end_turn", fakeapi.Text("back")))
			var p Provider
			if k.name == "anthropic" {
				p = NewAnthropic(AnthropicConfig{APIKey: "k", BaseURL: srv.URL, IdleTimeout: 20 * time.Millisecond})
			} else {
				p = NewOpenAI(OpenAIConfig{APIKey: "k", BaseURL: srv.URL + "/v1", IdleTimeout: 20 * time.Millisecond})
			}
			rec := &recorder{}
			if _, err := newTestLoop(p, &fakeExecutor{}, rec, &noSleep{}).Run(context.Background(), nil, "go"); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := rec.joined(EventText); got != "back" {
				t.Errorf("text %q", got)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
}

// A local server needs no key; none must be made up or taken from
// elsewhere.
func TestOpenAIWithoutKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-env")
	srv := fakeapi.NewOpenAI(t, fakeapi.Reply("end_turn", fakeapi.Text("local")))
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1"})
	if _, err := newTestLoop(p, &fakeExecutor{}, &recorder{}, &noSleep{}).Run(context.Background(), nil, "hi"); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if a := h.Get("Authorization"); a != "" && a != "Bearer " {
		t.Errorf("Authorization %q sent without a key", a)
	}
	if h.Get("X-Api-Key") != "" {
		t.Errorf("X-Api-Key sent to the OpenAI endpoint")
	}
}

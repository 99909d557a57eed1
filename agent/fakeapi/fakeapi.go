// Package fakeapi provides fake Anthropic Messages and OpenAI Chat
// Completions servers for tests. They speak the real wire formats,
// streaming (server-sent events) and not, play a script of replies in
// order, and record every request, so that tests drive the real SDK clients
// without reaching the network.
package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A Block is one piece of a scripted reply.
type Block struct {
	Type      string // text, thinking, tool_use
	Text      string // text or thinking
	Signature string
	ID, Name  string
	Input     string // tool input, raw JSON (possibly cut off)
}

// Text is a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// Thinking is a thinking block.
func Thinking(s, signature string) Block {
	return Block{Type: "thinking", Text: s, Signature: signature}
}

// ToolUse is a tool call.
func ToolUse(id, name, input string) Block {
	return Block{Type: "tool_use", ID: id, Name: name, Input: input}
}

// A Step is what the server does with one request.
type Step struct {
	// A reply: its blocks and stop reason (Anthropic's names; the OpenAI
	// server maps them to finish reasons).
	Blocks []Block
	Stop   string

	// An error reply instead: status, body and headers.
	Status int
	Body   string
	Header map[string]string

	// StreamError sends the reply's first events, then this error event.
	StreamError string
	// Drop sends the reply's first events, then closes the connection.
	Drop bool
	// Hang waits, sending nothing, until the client goes away.
	Hang bool
	// NoUsage leaves usage out of an OpenAI stream.
	NoUsage bool
	// Raw, when set, is the stream sent instead of the reply's: complete
	// server-sent events, verbatim.
	Raw []string
}

// Reply is a Step that replies with blocks and stop reason.
func Reply(stop string, blocks ...Block) Step { return Step{Stop: stop, Blocks: blocks} }

// Error is a Step that fails with status and an API error body.
func Error(status int, typ, message string) Step {
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": message}})
	return Step{Status: status, Body: string(body)}
}

// A Request is one recorded request.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// JSON decodes the request body.
func (r Request) JSON() map[string]any {
	var m map[string]any
	json.Unmarshal(r.Body, &m)
	return m
}

// A Server is a fake model API.
type Server struct {
	*httptest.Server
	t      testing.TB
	openai bool

	mu       sync.Mutex
	steps    []Step
	requests []Request
	// Reached is signalled (without blocking) when a request arrives.
	Reached chan int
}

// NewAnthropic starts a fake Anthropic Messages API playing steps.
func NewAnthropic(t testing.TB, steps ...Step) *Server { return start(t, false, steps) }

// NewOpenAI starts a fake OpenAI Chat Completions API playing steps. Its
// base URL for clients is URL + "/v1".
func NewOpenAI(t testing.TB, steps ...Step) *Server { return start(t, true, steps) }

func start(t testing.TB, openai bool, steps []Step) *Server {
	s := &Server{t: t, openai: openai, steps: steps, Reached: make(chan int, 64)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the requests so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	n := len(s.requests)
	var step Step
	ok := len(s.steps) > 0
	if ok {
		step, s.steps = s.steps[0], s.steps[1:]
	}
	s.mu.Unlock()
	select {
	case s.Reached <- n:
	default:
	}

	wantPath := "/v1/messages"
	if s.openai {
		wantPath = "/v1/chat/completions"
	}
	switch {
	case r.Method != http.MethodPost || r.URL.Path != wantPath:
		writeError(w, http.StatusNotFound, "not_found_error", "no such endpoint: "+r.Method+" "+r.URL.Path)
		return
	case !ok:
		writeError(w, http.StatusInternalServerError, "api_error", fmt.Sprintf("fakeapi: no scripted reply for request %d", n))
		return
	case step.Hang:
		<-r.Context().Done()
		return
	case step.Status != 0:
		for k, v := range step.Header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(step.Status)
		io.WriteString(w, step.Body)
		return
	}
	var req struct {
		Stream bool `json:"stream"`
	}
	json.Unmarshal(body, &req)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		if s.openai {
			w.Write(openAICompletion(step))
		} else {
			w.Write(anthropicMessage(step))
		}
		return
	}
	var events []string
	switch {
	case step.Raw != nil:
		events = step.Raw
	case s.openai:
		events = openAIChunks(step)
	default:
		events = anthropicEvents(step)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	cut := len(events)
	if step.Drop || step.StreamError != "" {
		cut = min(len(events), 3)
	}
	for _, ev := range events[:cut] {
		io.WriteString(w, ev)
		if flusher != nil {
			flusher.Flush()
		}
	}
	switch {
	case step.StreamError != "" && s.openai:
		fmt.Fprintf(w, "data: {\"error\":{\"type\":%q,\"message\":\"stream failed\"}}\n\n", step.StreamError)
	case step.StreamError != "":
		fmt.Fprintf(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":%q,\"message\":\"stream failed\"}}\n\n", step.StreamError)
	case step.Drop:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
	}
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func sse(event string, v any) string {
	data, _ := json.Marshal(v)
	if event == "" {
		return "data: " + string(data) + "\n\n"
	}
	return "event: " + event + "\ndata: " + string(data) + "\n\n"
}

// halves splits s in two, so that every streamed field arrives in pieces.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	i := len(s) / 2
	for i < len(s) && (s[i]&0xC0) == 0x80 {
		i++
	}
	return []string{s[:i], s[i:]}
}

var usage = map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 3, "cache_creation_input_tokens": 2}

func anthropicEvents(step Step) []string {
	stop := step.Stop
	if stop == "" {
		stop = "end_turn"
	}
	ev := []string{sse("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 3, "cache_creation_input_tokens": 2},
	}})}
	ev = append(ev, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
	for i, b := range step.Blocks {
		switch b.Type {
		case "text":
			ev = append(ev, sse("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}}))
			for _, p := range halves(b.Text) {
				ev = append(ev, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": p}}))
			}
		case "thinking":
			ev = append(ev, sse("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}}))
			for _, p := range halves(b.Text) {
				ev = append(ev, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": p}}))
			}
			ev = append(ev, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": b.Signature}}))
		case "tool_use":
			ev = append(ev, sse("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}}))
			for _, p := range halves(b.Input) {
				ev = append(ev, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}))
			}
		}
		// A reply cut off at max_tokens never closes its last block.
		if !(stop == "max_tokens" && i == len(step.Blocks)-1) {
			ev = append(ev, sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
		}
	}
	ev = append(ev, sse("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage}))
	ev = append(ev, sse("message_stop", map[string]any{"type": "message_stop"}))
	return ev
}

func anthropicMessage(step Step) []byte {
	stop := step.Stop
	if stop == "" {
		stop = "end_turn"
	}
	var content []any
	for _, b := range step.Blocks {
		switch b.Type {
		case "text":
			content = append(content, map[string]any{"type": "text", "text": b.Text})
		case "thinking":
			content = append(content, map[string]any{"type": "thinking", "thinking": b.Text, "signature": b.Signature})
		case "tool_use":
			content = append(content, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": json.RawMessage(b.Input)})
		}
	}
	data, _ := json.Marshal(map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
	return data
}

func finishReason(step Step, hasCalls bool) string {
	switch step.Stop {
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	case "tool_use":
		return "tool_calls"
	}
	if hasCalls {
		return "tool_calls"
	}
	return "stop"
}

func openAIChunks(step Step) []string {
	chunk := func(delta map[string]any, finish any) string {
		return sse("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	ev := []string{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	calls := 0
	for _, b := range step.Blocks {
		switch b.Type {
		case "thinking":
			for _, p := range halves(b.Text) {
				ev = append(ev, chunk(map[string]any{"reasoning_content": p}, nil))
			}
		case "text":
			for _, p := range halves(b.Text) {
				ev = append(ev, chunk(map[string]any{"content": p}, nil))
			}
		case "tool_use":
			ev = append(ev, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": calls, "id": b.ID, "type": "function",
				"function": map[string]any{"name": b.Name, "arguments": ""}}}}, nil))
			for _, p := range halves(b.Input) {
				ev = append(ev, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": calls, "function": map[string]any{"arguments": p}}}}, nil))
			}
			calls++
		}
	}
	ev = append(ev, chunk(map[string]any{}, finishReason(step, calls > 0)))
	if !step.NoUsage {
		ev = append(ev, sse("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 13, "completion_tokens": 5, "total_tokens": 18, "prompt_tokens_details": map[string]any{"cached_tokens": 3}}}))
	}
	return append(ev, "data: [DONE]\n\n")
}

func openAICompletion(step Step) []byte {
	var text, reasoning strings.Builder
	var calls []any
	for _, b := range step.Blocks {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			reasoning.WriteString(b.Text)
		case "tool_use":
			calls = append(calls, map[string]any{"id": b.ID, "type": "function", "function": map[string]any{"name": b.Name, "arguments": b.Input}})
		}
	}
	msg := map[string]any{"role": "assistant", "content": text.String()}
	if reasoning.Len() > 0 {
		msg["reasoning_content"] = reasoning.String()
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	data, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": "fake",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(step, len(calls) > 0)}},
		"usage":   map[string]any{"prompt_tokens": 13, "completion_tokens": 5, "total_tokens": 18}})
	return data
}

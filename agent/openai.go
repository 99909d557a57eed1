package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAI defaults.
const (
	DefaultOpenAIModel     = "gpt-5"
	DefaultOpenAIMaxTokens = 16384
	DefaultOpenAIBaseURL   = "https://api.openai.com/v1"
)

// OpenAIConfig configures a provider for OpenAI's Chat Completions API or
// any endpoint that speaks it (OpenRouter, Ollama, llama.cpp, vLLM).
type OpenAIConfig struct {
	APIKey string // may be empty for a local server
	// BaseURL includes the /v1; empty means OpenAI's.
	BaseURL   string
	Model     string
	MaxTokens int64
	// HTTPClient defaults to NewHTTPClient().
	HTTPClient *http.Client
	// IdleTimeout bounds the silence inside a stream; zero means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
}

type openAIProvider struct {
	cfg    OpenAIConfig
	client openai.Client
	// legacyMaxTokens is set once the endpoint has rejected
	// max_completion_tokens, so later requests send max_tokens instead.
	legacyMaxTokens atomic.Bool
	// noStreamOptions is set once the endpoint has rejected
	// stream_options; usage is then whatever it volunteers.
	noStreamOptions atomic.Bool
}

// NewOpenAI returns a Provider for an OpenAI-compatible endpoint.
func NewOpenAI(cfg OpenAIConfig) Provider {
	if cfg.Model == "" {
		cfg.Model = DefaultOpenAIModel
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultOpenAIMaxTokens
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = NewHTTPClient()
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(0),
		// Set even when empty, so that nothing from the environment is
		// sent in its place.
		option.WithAPIKey(cfg.APIKey),
	}
	return &openAIProvider{cfg: cfg, client: openai.NewClient(opts...)}
}

func (p *openAIProvider) Name() string  { return "openai" }
func (p *openAIProvider) Model() string { return p.cfg.Model }

func (p *openAIProvider) params(req Request) openai.ChatCompletionNewParams {
	params := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(p.cfg.Model),
		Messages: openAIMessages(req.System, req.Messages),
	}
	if !p.noStreamOptions.Load() {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	if p.legacyMaxTokens.Load() {
		params.MaxTokens = openai.Int(p.cfg.MaxTokens)
	} else {
		params.MaxCompletionTokens = openai.Int(p.cfg.MaxTokens)
	}
	for _, d := range req.Tools {
		var schema map[string]any
		json.Unmarshal(d.Schema, &schema)
		fn := shared.FunctionDefinitionParam{Name: d.Name, Parameters: schema}
		if d.Description != "" {
			fn.Description = openai.String(d.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	return params
}

// ErrorPrefix starts an error result in a tool message, since the Chat
// Completions API has no is_error flag.
const ErrorPrefix = "ERROR: "

func openAIMessages(system string, msgs []Message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	for _, m := range msgs {
		var text []string
		if m.Role == RoleAssistant {
			var calls []openai.ChatCompletionMessageToolCallUnionParam
			for _, b := range m.Content {
				switch b.Type {
				case BlockText:
					if b.Text != "" {
						text = append(text, b.Text)
					}
				case BlockToolUse:
					args := string(b.Input)
					if !json.Valid(b.Input) {
						args = "{}"
					}
					calls = append(calls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       b.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: args},
					}})
				}
			}
			if len(text) == 0 && len(calls) == 0 {
				continue
			}
			a := openai.ChatCompletionAssistantMessageParam{ToolCalls: calls}
			if len(text) > 0 {
				a.Content.OfString = openai.String(strings.Join(text, "\n\n"))
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
			continue
		}
		for _, b := range m.Content {
			switch b.Type {
			case BlockToolResult:
				content := b.Text
				if b.IsError {
					content = ErrorPrefix + content
				}
				out = append(out, openai.ToolMessage(content, b.ID))
			case BlockText:
				if b.Text != "" {
					text = append(text, b.Text)
				}
			}
		}
		if len(text) > 0 {
			out = append(out, openai.UserMessage(strings.Join(text, "\n\n")))
		}
	}
	return out
}

// openAICall is a tool call being assembled from stream deltas.
type openAICall struct {
	index     int64
	id, name  string
	arguments strings.Builder
}

func (p *openAIProvider) Stream(ctx context.Context, req Request, onDelta func(kind, text string)) (Reply, error) {
	for {
		reply, err := p.stream(ctx, req, onDelta)
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
			return reply, err
		}
		// Endpoints differ in what they accept: OpenAI's newer models
		// reject max_tokens, many compatible servers know only it, and some
		// reject stream_options. Each is dropped once, on the endpoint's
		// word, and the request sent again.
		switch {
		case !p.legacyMaxTokens.Load() && strings.Contains(ae.Message, "max_completion_tokens"):
			p.legacyMaxTokens.Store(true)
		case !p.noStreamOptions.Load() && strings.Contains(ae.Message, "stream_options"):
			p.noStreamOptions.Store(true)
		default:
			return reply, err
		}
	}
}

func (p *openAIProvider) stream(ctx context.Context, req Request, onDelta func(kind, text string)) (reply Reply, err error) {
	defer func() {
		if r := recover(); r != nil {
			reply, err = Reply{}, &APIError{Provider: "openai", Message: fmt.Sprintf("malformed reply: %v", r)}
		}
	}()
	rctx, idle, stop := watchIdle(ctx, p.cfg.IdleTimeout)
	defer stop()
	stream := p.client.Chat.Completions.NewStreaming(rctx, p.params(req))
	defer stream.Close()

	var (
		text, thinking, refusal strings.Builder
		calls                   []*openAICall
		finish                  string
		chunks                  int
		sawUsage                bool
	)
	for stream.Next() {
		idle.kick()
		chunk := stream.Current()
		chunks++
		if chunk.JSON.Usage.Valid() && chunk.JSON.Usage.Raw() != "null" {
			sawUsage = true
			u := chunk.Usage
			reply.Usage = Usage{
				InputTokens:     u.PromptTokens - u.PromptTokensDetails.CachedTokens,
				OutputTokens:    u.CompletionTokens,
				CacheReadTokens: u.PromptTokensDetails.CachedTokens,
			}
			if u.PromptTokensDetails.CacheWriteTokens > 0 {
				reply.Usage.CacheWriteTokens = u.PromptTokensDetails.CacheWriteTokens
			}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			d := ch.Delta
			if r := reasoningDelta(d); r != "" {
				thinking.WriteString(r)
				onDelta(DeltaThinking, r)
			}
			if d.Content != "" {
				text.WriteString(d.Content)
				onDelta(DeltaText, d.Content)
			}
			if d.Refusal != "" {
				refusal.WriteString(d.Refusal)
			}
			for _, tc := range d.ToolCalls {
				calls = addCallDelta(calls, tc)
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if err := idle.stalled(ctx); err != nil {
		return Reply{}, &StreamError{Provider: "openai", Err: err}
	}
	if err := stream.Err(); err != nil {
		return Reply{}, p.classify(err)
	}
	// A stream that ends without a finish reason (or, from servers that
	// omit it, the closing usage) was cut off, even if it ended cleanly.
	if chunks == 0 || finish == "" && !sawUsage {
		return Reply{}, &StreamError{Provider: "openai", Err: errors.New("the stream ended before the reply was complete")}
	}

	if thinking.Len() > 0 {
		reply.Content = append(reply.Content, Block{Type: BlockThinking, Text: thinking.String()})
	}
	if text.Len() > 0 {
		reply.Content = append(reply.Content, Block{Type: BlockText, Text: text.String()})
	}
	if refusal.Len() > 0 {
		reply.Content = append(reply.Content, Block{Type: BlockText, Text: refusal.String()})
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].index < calls[j].index })
	for i, c := range calls {
		id := c.id
		if id == "" {
			// Some local servers send no IDs; the conversation needs them
			// to pair results with calls.
			id = fmt.Sprintf("call_%d_%d", len(req.Messages), i)
		}
		args := json.RawMessage(c.arguments.String())
		if strings.TrimSpace(string(args)) == "" {
			args = json.RawMessage("{}")
		}
		reply.Content = append(reply.Content, Block{Type: BlockToolUse, ID: id, Name: c.name, Input: args})
	}
	switch {
	case refusal.Len() > 0 || finish == "content_filter":
		reply.StopReason = StopRefusal
	case finish == "length":
		reply.StopReason = StopMaxTokens
	case len(calls) > 0:
		// Some servers say "stop" even when the reply calls tools.
		reply.StopReason = StopToolUse
	default:
		reply.StopReason = StopEndTurn
	}
	return reply, nil
}

// addCallDelta folds one streamed tool-call delta into calls. Deltas of one
// call share an index; a delta that brings a new ID for an index whose call
// already has an ID, or a name for an index whose call is complete, starts
// another call: that is how some servers send several complete calls, all
// at index 0.
func addCallDelta(calls []*openAICall, tc openai.ChatCompletionChunkChoiceDeltaToolCall) []*openAICall {
	var c *openAICall
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].index == tc.Index {
			c = calls[i]
			break
		}
	}
	newID := tc.ID != "" && c != nil && c.id != "" && tc.ID != c.id
	newName := tc.Function.Name != "" && c != nil && c.name != "" && json.Valid([]byte(c.arguments.String()))
	if c == nil || newID || newName {
		c = &openAICall{index: tc.Index}
		if len(calls) > 0 && tc.Index <= calls[len(calls)-1].index {
			c.index = calls[len(calls)-1].index + 1
		}
		calls = append(calls, c)
	}
	if tc.ID != "" {
		c.id = tc.ID
	}
	c.name += tc.Function.Name
	c.arguments.WriteString(tc.Function.Arguments)
	return calls
}

// reasoningDelta returns the reasoning text of a delta, which compatible
// servers send as reasoning_content (DeepSeek, vLLM, llama.cpp) or
// reasoning (OpenRouter, Ollama).
func reasoningDelta(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[k]
		if !ok || f.Raw() == "" {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func (p *openAIProvider) classify(err error) error {
	if errors.Is(err, errRedirect) {
		return &APIError{Provider: "openai", Message: err.Error()}
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		typ, msg := ae.Type, ae.Message
		if msg == "" {
			typ, msg = errorBody(ae.RawJSON())
		}
		e := &APIError{Provider: "openai", Status: ae.StatusCode, Type: typ, Message: msg}
		if ae.Response != nil {
			e.RetryAfter = retryAfter(ae.Response.Header)
		}
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		typ, msg := errorBody(strings.TrimPrefix(se.Message, "received error while streaming: "))
		if msg == "" {
			msg = se.Message
		}
		// Mid-stream errors from compatible servers are mostly overloads;
		// without a status, the type decides.
		return &APIError{Provider: "openai", Type: typ, Message: msg}
	}
	return &StreamError{Provider: "openai", Err: err}
}

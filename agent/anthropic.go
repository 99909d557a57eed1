package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// Anthropic defaults.
const (
	DefaultAnthropicModel = "claude-opus-5"
	// Streaming lifts the non-streaming request's 16,000 limit; thinking
	// counts against it too.
	DefaultAnthropicMaxTokens = 32000
)

// AnthropicConfig configures the Anthropic Messages API provider. Only what
// is set here is used: the SDK's own environment and profile lookups are
// switched off, so that what corral uses is what the user set.
type AnthropicConfig struct {
	APIKey    string // sent as X-Api-Key
	AuthToken string // sent as a bearer token when there is no APIKey
	BaseURL   string // empty means the SDK's default
	Model     string
	MaxTokens int64
	// HTTPClient defaults to NewHTTPClient().
	HTTPClient *http.Client
	// IdleTimeout bounds the silence inside a stream; zero means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
}

type anthropicProvider struct {
	cfg    AnthropicConfig
	client anthropic.Client
}

// NewAnthropic returns a Provider for the Anthropic Messages API.
func NewAnthropic(cfg AnthropicConfig) Provider {
	if cfg.Model == "" {
		cfg.Model = DefaultAnthropicModel
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultAnthropicMaxTokens
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = NewHTTPClient()
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(cfg.HTTPClient),
		// The loop retries, with its own policy, including failures in the
		// middle of a stream that the SDK cannot see.
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	switch {
	case cfg.APIKey != "":
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	case cfg.AuthToken != "":
		opts = append(opts, option.WithAuthToken(cfg.AuthToken))
	}
	return &anthropicProvider{cfg: cfg, client: anthropic.NewClient(opts...)}
}

func (p *anthropicProvider) Name() string  { return "anthropic" }
func (p *anthropicProvider) Model() string { return p.cfg.Model }

// datedModel matches the IDs of models older than the 4.6 generation, which
// predate adaptive thinking.
var datedModel = regexp.MustCompile(`-20\d{6}$|claude-(3|instant|2)`)

func (p *anthropicProvider) params(req Request) anthropic.MessageNewParams {
	ephemeral := anthropic.NewCacheControlEphemeralParam()
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.cfg.Model),
		MaxTokens: p.cfg.MaxTokens,
		Messages:  anthropicMessages(req.Messages),
	}
	for _, d := range req.Tools {
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: anthropicTool(d.Name, d.Description, d.Schema)})
	}
	// Tools then system form the cached prefix; the breakpoint on the system
	// prompt (or on the last tool, without one) caches both.
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: ephemeral}}
	} else if n := len(params.Tools); n > 0 {
		params.Tools[n-1].OfTool.CacheControl = ephemeral
	}
	if !datedModel.MatchString(p.cfg.Model) {
		params.Thinking = anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{Display: "summarized"}}
	}
	markHistoryBreakpoint(params.Messages)
	return params
}

// markHistoryBreakpoint puts a cache breakpoint on the last block of the
// conversation that can carry one, so that the next request, which repeats
// this one's history, reads it from the cache.
func markHistoryBreakpoint(msgs []anthropic.MessageParam) {
	ephemeral := anthropic.NewCacheControlEphemeralParam()
	for i := len(msgs) - 1; i >= 0; i-- {
		c := msgs[i].Content
		for j := len(c) - 1; j >= 0; j-- {
			switch {
			case c[j].OfText != nil:
				c[j].OfText.CacheControl = ephemeral
				return
			case c[j].OfToolResult != nil:
				c[j].OfToolResult.CacheControl = ephemeral
				return
			case c[j].OfToolUse != nil:
				c[j].OfToolUse.CacheControl = ephemeral
				return
			}
		}
	}
}

func anthropicTool(name, description string, schema json.RawMessage) *anthropic.ToolParam {
	var fields map[string]json.RawMessage
	json.Unmarshal(schema, &fields)
	in := anthropic.ToolInputSchemaParam{}
	extra := map[string]any{}
	for k, v := range fields {
		switch k {
		case "type":
		case "properties":
			in.Properties = v
		case "required":
			json.Unmarshal(v, &in.Required)
		default:
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		in.ExtraFields = extra
	}
	t := &anthropic.ToolParam{Name: name, InputSchema: in}
	if description != "" {
		t.Description = anthropic.String(description)
	}
	return t
}

// anthropicMessages translates the neutral conversation. Consecutive
// messages of one role are merged, since a resumed conversation may hold
// the results of an interrupted reply followed by a new prompt.
func anthropicMessages(msgs []Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	for _, m := range msgs {
		var blocks []anthropic.ContentBlockParamUnion
		for _, b := range m.Content {
			switch b.Type {
			case BlockText:
				if b.Text != "" {
					blocks = append(blocks, anthropic.NewTextBlock(b.Text))
				}
			case BlockThinking:
				// Thinking without a signature came from another API and
				// would be rejected.
				if b.Signature != "" {
					blocks = append(blocks, anthropic.NewThinkingBlock(b.Signature, b.Text))
				}
			case BlockRedactedThinking:
				blocks = append(blocks, anthropic.NewRedactedThinkingBlock(b.Data))
			case BlockToolUse:
				input := b.Input
				if !json.Valid(input) {
					input = json.RawMessage("{}")
				}
				blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolUse: &anthropic.ToolUseBlockParam{ID: b.ID, Name: b.Name, Input: input}})
			case BlockToolResult:
				r := anthropic.NewToolResultBlock(b.ID, b.Text, b.IsError)
				if b.Text == "" {
					r.OfToolResult.Content = nil
				}
				blocks = append(blocks, r)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		role := anthropic.MessageParamRoleUser
		if m.Role == RoleAssistant {
			role = anthropic.MessageParamRoleAssistant
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, anthropic.MessageParam{Role: role, Content: blocks})
	}
	return out
}

func (p *anthropicProvider) Stream(ctx context.Context, req Request, onDelta func(kind, text string)) (reply Reply, err error) {
	defer func() {
		// The SDK decodes whatever the server sends; no reply, however
		// malformed, may take the process down.
		if r := recover(); r != nil {
			reply, err = Reply{}, &APIError{Provider: "anthropic", Message: fmt.Sprintf("malformed reply: %v", r)}
		}
	}()
	rctx, idle, stop := watchIdle(ctx, p.cfg.IdleTimeout)
	defer stop()
	stream := p.client.Messages.NewStreaming(rctx, p.params(req))
	defer stream.Close()
	var acc anthropic.Message
	stopped := false
	for stream.Next() {
		idle.kick()
		ev := stream.Current()
		if err := acc.Accumulate(ev); err != nil {
			return Reply{}, &StreamError{Provider: "anthropic", Err: err}
		}
		switch ev.Type {
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				onDelta(DeltaText, ev.Delta.Text)
			case "thinking_delta":
				onDelta(DeltaThinking, ev.Delta.Thinking)
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := idle.stalled(ctx); err != nil {
		return Reply{}, &StreamError{Provider: "anthropic", Err: err}
	}
	if err := stream.Err(); err != nil {
		return Reply{}, p.classify(err)
	}
	if !stopped {
		return Reply{}, &StreamError{Provider: "anthropic", Err: errors.New("the stream ended before the reply was complete")}
	}
	return anthropicReply(acc), nil
}

func anthropicReply(m anthropic.Message) Reply {
	r := Reply{
		StopReason: string(m.StopReason),
		Usage: Usage{
			InputTokens:      m.Usage.InputTokens,
			OutputTokens:     m.Usage.OutputTokens,
			CacheReadTokens:  m.Usage.CacheReadInputTokens,
			CacheWriteTokens: m.Usage.CacheCreationInputTokens,
		},
	}
	for _, c := range m.Content {
		switch c.Type {
		case "text":
			r.Content = append(r.Content, Block{Type: BlockText, Text: c.Text})
		case "thinking":
			r.Content = append(r.Content, Block{Type: BlockThinking, Text: c.Thinking, Signature: c.Signature})
		case "redacted_thinking":
			r.Content = append(r.Content, Block{Type: BlockRedactedThinking, Data: c.Data})
		case "tool_use":
			input := c.Input
			if len(input) == 0 || !json.Valid(input) {
				input = json.RawMessage("{}")
			}
			r.Content = append(r.Content, Block{Type: BlockToolUse, ID: c.ID, Name: c.Name, Input: append(json.RawMessage(nil), input...)})
		}
	}
	switch r.StopReason {
	case StopEndTurn, StopToolUse, StopMaxTokens, StopRefusal, StopPauseTurn:
	case "stop_sequence", "":
		r.StopReason = StopEndTurn
	case "model_context_window_exceeded":
		r.StopReason = StopMaxTokens
	}
	return r
}

func (p *anthropicProvider) classify(err error) error {
	if errors.Is(err, errRedirect) {
		return &APIError{Provider: "anthropic", Message: err.Error()}
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		typ, msg := errorBody(ae.RawJSON())
		if t := string(ae.Type()); t != "" {
			typ = t
		}
		e := &APIError{Provider: "anthropic", Status: ae.StatusCode, Type: typ, Message: msg}
		if ae.Response != nil {
			e.RetryAfter = retryAfter(ae.Response.Header)
		}
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &StreamError{Provider: "anthropic", Err: err}
}

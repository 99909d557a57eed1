package agent

import (
	"context"
	"encoding/json"

	"corral/tools"
)

// Block kinds of the neutral conversation model. Both providers translate
// to and from these, and sessions store them, so a conversation recorded
// against one API can be replayed against the same API exactly.
const (
	BlockText             = "text"
	BlockThinking         = "thinking"
	BlockRedactedThinking = "redacted_thinking"
	BlockToolUse          = "tool_use"
	BlockToolResult       = "tool_result"
)

// A Block is one piece of a message.
type Block struct {
	Type string `json:"type"`
	// Text is the text of a text block, the thinking of a thinking block and
	// the content of a tool result.
	Text string `json:"text,omitempty"`
	// Signature is an Anthropic thinking block's signature, which the API
	// needs back verbatim.
	Signature string `json:"signature,omitempty"`
	// Data is a redacted thinking block's opaque payload.
	Data string `json:"data,omitempty"`
	// ID is a tool_use block's ID, or the ID of the call a tool_result answers.
	ID      string          `json:"id,omitempty"`
	Name    string          `json:"name,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
}

// Roles of messages.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// A Message is one turn of the conversation.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// Stop reasons, normalised across providers.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopRefusal   = "refusal"
	StopPauseTurn = "pause_turn"
)

// Usage counts the tokens of one model reply.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
}

func (u *Usage) add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
}

// A Reply is one complete model reply.
type Reply struct {
	Content    []Block
	StopReason string
	Usage      Usage
}

// A Request is what the loop asks of a provider.
type Request struct {
	System   string
	Tools    []tools.Definition
	Messages []Message
}

// Delta kinds streamed while a reply arrives.
const (
	DeltaText     = "text"
	DeltaThinking = "thinking"
)

// A Provider speaks one model API. Stream sends req, calls onDelta with text
// and thinking as they arrive, and returns the complete reply. Its errors are
// classified by [Retryable].
type Provider interface {
	Name() string
	Model() string
	Stream(ctx context.Context, req Request, onDelta func(kind, text string)) (Reply, error)
}

// InterruptedText is the result given to a tool call that did not complete
// because the user interrupted, so that the conversation stays valid.
const InterruptedText = "interrupted by the user"

// Repair gives every tool_use in msgs a tool_result and drops results that
// answer no call, so that an API accepts the conversation. A run that was
// killed or interrupted mid-task leaves calls without results; an API
// rejects the next request if they stay that way. It returns the repaired
// conversation and the results it added after the last assistant message,
// which the caller may want to record.
func Repair(msgs []Message) (out []Message, tail []Block) {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role != RoleAssistant {
			// Results are only valid right after the call they answer;
			// anything else here is an orphan from a lost assistant line.
			if i == 0 || msgs[i-1].Role != RoleAssistant {
				m = dropResults(m, nil)
				if len(m.Content) == 0 {
					continue
				}
			}
			out = append(out, m)
			continue
		}
		out = append(out, m)
		var calls []string
		for _, b := range m.Content {
			if b.Type == BlockToolUse {
				calls = append(calls, b.ID)
			}
		}
		var next *Message
		if i+1 < len(msgs) && msgs[i+1].Role == RoleUser {
			n := dropResults(msgs[i+1], calls)
			next = &n
			i++
		}
		answered := map[string]bool{}
		if next != nil {
			for _, b := range next.Content {
				if b.Type == BlockToolResult {
					answered[b.ID] = true
				}
			}
		}
		var missing []Block
		for _, id := range calls {
			if !answered[id] {
				missing = append(missing, Block{Type: BlockToolResult, ID: id, Text: InterruptedText, IsError: true})
			}
		}
		switch {
		case next == nil && len(missing) > 0:
			out = append(out, Message{Role: RoleUser, Content: missing})
			if i == len(msgs)-1 {
				tail = missing
			}
		case next != nil:
			// Results go first: Anthropic wants tool_result blocks ahead of
			// any text in the message that answers the calls.
			var results, rest []Block
			for _, b := range next.Content {
				if b.Type == BlockToolResult {
					results = append(results, b)
				} else {
					rest = append(rest, b)
				}
			}
			content := append(append(results, missing...), rest...)
			if len(content) > 0 {
				out = append(out, Message{Role: RoleUser, Content: content})
			}
			if i == len(msgs)-1 && len(rest) == 0 {
				tail = missing
			}
		}
	}
	return out, tail
}

// dropResults returns m without the tool results that answer none of calls.
func dropResults(m Message, calls []string) Message {
	keep := m.Content[:0:0]
	for _, b := range m.Content {
		if b.Type == BlockToolResult && !contains(calls, b.ID) {
			continue
		}
		keep = append(keep, b)
	}
	return Message{Role: m.Role, Content: keep}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

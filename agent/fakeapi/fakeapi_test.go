package fakeapi

import (
	"context"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
)

// The fakes must speak what the real SDKs understand, without streaming
// too: these drive the SDKs' non-streaming calls against them.
func TestNonStreamingAnthropic(t *testing.T) {
	srv := NewAnthropic(t, Reply("tool_use", Text("hi"), ToolUse("t1", "read_file", `{"path":"a"}`)))
	c := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
	msg, err := c.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model: "m", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("x"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != "tool_use" || len(msg.Content) != 2 || msg.Content[0].Text != "hi" || string(msg.Content[1].Input) != `{"path":"a"}` {
		t.Errorf("message %+v", msg)
	}
}

func TestNonStreamingOpenAI(t *testing.T) {
	srv := NewOpenAI(t, Reply("tool_use", Text("hi"), ToolUse("c1", "read_file", `{"path":"a"}`)))
	c := openai.NewClient(ooption.WithBaseURL(srv.URL+"/v1"), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
	res, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")},
	})
	if err != nil {
		t.Fatal(err)
	}
	ch := res.Choices[0]
	if ch.FinishReason != "tool_calls" || ch.Message.Content != "hi" || len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Arguments != `{"path":"a"}` {
		t.Errorf("completion %+v", res)
	}
}

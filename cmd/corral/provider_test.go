package main

import (
	"strings"
	"testing"

	"corral/agent"
)

func TestProviderSelection(t *testing.T) {
	cases := []struct {
		name      string
		env       map[string]string
		flags     agentFlags
		head      agent.Event
		want      string // provider/model
		wantError string
	}{
		{name: "nothing set", wantError: "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"},
		{name: "anthropic key", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: "anthropic/" + agent.DefaultAnthropicModel},
		{name: "anthropic token", env: map[string]string{"ANTHROPIC_AUTH_TOKEN": "k"}, want: "anthropic/" + agent.DefaultAnthropicModel},
		{name: "anthropic first", env: map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "o"}, want: "anthropic/" + agent.DefaultAnthropicModel},
		{name: "openai key", env: map[string]string{"OPENAI_API_KEY": "o"}, want: "openai/" + agent.DefaultOpenAIModel},
		{name: "local server", env: map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}, want: "openai/" + agent.DefaultOpenAIModel},
		{name: "explicit provider", env: map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "o"}, flags: agentFlags{provider: "openai"}, want: "openai/" + agent.DefaultOpenAIModel},
		{name: "explicit provider without its key", env: map[string]string{"OPENAI_API_KEY": "o"}, flags: agentFlags{provider: "anthropic"}, wantError: "set ANTHROPIC_API_KEY"},
		{name: "unknown provider", env: map[string]string{"OPENAI_API_KEY": "o"}, flags: agentFlags{provider: "gemini"}, wantError: "want anthropic or openai"},
		{name: "CORRAL_MODEL", env: map[string]string{"ANTHROPIC_API_KEY": "k", "CORRAL_MODEL": "claude-x"}, want: "anthropic/claude-x"},
		{name: "--model wins", env: map[string]string{"ANTHROPIC_API_KEY": "k", "CORRAL_MODEL": "claude-x"}, flags: agentFlags{model: "claude-y"}, want: "anthropic/claude-y"},
		{name: "resumed session keeps its model", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, head: agent.Event{Provider: "anthropic", Model: "claude-old"}, want: "anthropic/claude-old"},
		{name: "resumed session of another provider", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, head: agent.Event{Provider: "openai", Model: "gpt-old"}, want: "anthropic/" + agent.DefaultAnthropicModel},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := newProvider(c.flags, func(k string) string { return c.env[k] }, c.head)
			if c.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantError) {
					t.Fatalf("err %v, want %q", err, c.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Name() + "/" + p.Model(); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSystemPromptAgentsMD(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("TOP SECRET"), 0o644)
	cases := []struct {
		name    string
		setup   func(dir string)
		want    string
		notWant string
	}{
		{"none", func(string) {}, "", "AGENTS.md"},
		{"present", func(d string) { os.WriteFile(filepath.Join(d, "AGENTS.md"), []byte("Run make test."), 0o644) }, "Run make test.", ""},
		{"empty", func(d string) { os.WriteFile(filepath.Join(d, "AGENTS.md"), []byte(" \n"), 0o644) }, "", "AGENTS.md"},
		{"symlink out of the workspace", func(d string) { os.Symlink(outside, filepath.Join(d, "AGENTS.md")) }, "", "TOP SECRET"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(dir)
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			got := SystemPrompt(BasePrompt, root)
			if !strings.HasPrefix(got, BasePrompt) {
				t.Errorf("the built-in prompt does not come first")
			}
			if c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("prompt lacks %q", c.want)
			}
			if c.notWant != "" && strings.Contains(got, c.notWant) {
				t.Errorf("prompt has %q", c.notWant)
			}
		})
	}
}

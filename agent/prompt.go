package agent

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// BasePrompt is the built-in system prompt. It is short on purpose: the
// safety is in the executor, so the prompt only has to say how to work.
const BasePrompt = `You are corral, a coding agent working in the user's workspace through four tools: read_file, list_files, edit_file and run_bash.

- Use the tools to do the task rather than describing what the user should do.
- Read a file before you edit it, and edit with exact text taken from what you read.
- run_bash is not interactive: never run a command that waits for input or does not exit on its own.
- Paths are confined to the workspace. When a path is refused, do not try to get around it; report it to the user.
- Before you say the task is done, verify it: build, run the tests, or read back what you changed.
- Finish with a short summary of what you did.`

// maxAgentsMD bounds how much of AGENTS.md goes into the system prompt.
const maxAgentsMD = 64 << 10

// SystemPrompt returns base followed by the workspace's AGENTS.md, read
// through root so that the file cannot lead outside the workspace.
func SystemPrompt(base string, root *os.Root) string {
	if root == nil {
		return base
	}
	f, err := root.Open("AGENTS.md")
	if err != nil {
		return base
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return base
	}
	data, err := io.ReadAll(io.LimitReader(f, maxAgentsMD))
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return base
	}
	return fmt.Sprintf("%s\n\nThe workspace's AGENTS.md says:\n\n<agents_md>\n%s\n</agents_md>", base, strings.TrimSpace(string(data)))
}

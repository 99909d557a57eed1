package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCorral(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestToolCommand(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644)
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"tool", "read_file", `{"path":"a.txt"}`, "--workspace", dir}, 0, "hello\n", ""},
		{[]string{"tool", "--workspace", dir, "read_file", `{"path":"a.txt"}`}, 0, "hello\n", ""},
		{[]string{"tool", "read_file", `{"path":"../a.txt"}`, "--workspace", dir}, 1, "Refused: '../a.txt' resolves outside the workspace root.\n", ""},
		{[]string{"tool", "list_files", "--workspace", dir}, 0, "a.txt\n", ""},
		{[]string{"tool", "edit_file", `{"path":"a.txt","old_str":"hello","new_str":"bye"}`, "--workspace", dir}, 1,
			"Not run: edit_file needs approval, and approval could not be asked (no terminal). Rerun corral with --auto-approve to allow it.\n", ""},
		{[]string{"tool", "edit_file", `{"path":"a.txt","old_str":"hello","new_str":"bye"}`, "--workspace", dir, "--auto-approve"}, 0, "Edited a.txt.\n", ""},
		{[]string{"tool", "read_file", `{"path":"a.txt"}`, "--workspace", dir}, 0, "bye\n", ""},
		{[]string{"tool", "rm", `{}`, "--workspace", dir}, 2, "", `corral tool: unknown tool "rm"`},
		{[]string{"tool", "read_file", `{"path":`, "--workspace", dir}, 2, "", "corral tool: the arguments must be a JSON object"},
		{[]string{"tool", "read_file", `[1]`, "--workspace", dir}, 2, "", "corral tool: the arguments must be a JSON object"},
		{[]string{"tool"}, 2, "", "want a tool name"},
		{[]string{"tool", "read_file", "{}", "{}"}, 2, "", "want a tool name"},
		{[]string{"tool", "read_file", "{}", "--no-such-flag"}, 2, "", "flag provided but not defined"},
		{[]string{"tool", "read_file", `{"path":"a.txt"}`, "--workspace", filepath.Join(dir, "missing")}, 1, "", "corral: workspace"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCorral(t, tt.args...)
		if code != tt.code || stdout != tt.stdout || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("corral %q\n  = %d, %q, %q\n  want %d, %q, stderr containing %q", tt.args, code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, stdout, _ := runCorral(t, args...)
		if code != 0 || !strings.Contains(stdout, "corral tool NAME") {
			t.Errorf("corral %v = %d, %q", args, code, stdout)
		}
	}
	code, stdout, _ := runCorral(t, "tool", "--help")
	if code != 0 || !strings.Contains(stdout, "Exit status: 0 for a success result") || !strings.Contains(stdout, "-auto-approve") {
		t.Errorf("corral tool --help = %d, %q", code, stdout)
	}
}

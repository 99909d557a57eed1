package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSh(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "script.sh"), []byte("echo \"file:$0:$1:$2:$#\"\nexit 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.sh")
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantOut    string
		wantErrHas string
	}{
		{"-c", []string{"-c", "echo hi"}, "", 0, "hi\n", ""},
		{"-c exit status", []string{"-c", "exit 42"}, "", 42, "", ""},
		{"-c name and args as bash -c", []string{"-c", `echo "$0|$1|$2|$#"`, "me", "a b", "-x"}, "", 0, "me|a b|-x|2\n", ""},
		{"file and args", []string{script, "one", "--two"}, "", 7, "file:" + script + ":one:--two:2\n", ""},
		{"stdin is inherited", []string{"-c", "read -r line; echo got:$line"}, "typed\n", 0, "got:typed\n", ""},
		{"timeout", []string{"--command-timeout", "200ms", "-c", "echo started; while :; do :; done"}, "", 124, "started\n", "timed out after 200ms"},
		{"confined to the workspace", []string{"-c", "echo x > ../out"}, "", 1, "", "Refused: '../out'"},
		{"missing file", []string{filepath.Join(dir, "nope.sh")}, "", 127, "", "no such file"},
		{"no script", nil, "", 2, "", "want -c"},
		{"bad flag", []string{"--nope"}, "", 2, "", "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"sh", "--workspace", dir}, tc.args...)
			code := run(args, strings.NewReader(tc.stdin), &out, &errOut)
			if code != tc.wantCode || out.String() != tc.wantOut || !strings.Contains(errOut.String(), tc.wantErrHas) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr containing %q",
					code, out.String(), errOut.String(), tc.wantCode, tc.wantOut, tc.wantErrHas)
			}
		})
	}
}

func TestShHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"sh", "--help"}, strings.NewReader(""), &out, &errOut); code != 0 || !strings.Contains(out.String(), "corral sh") {
		t.Errorf("exit %d, stdout %q", code, out.String())
	}
}

// A script the embedded shell cannot run goes to the system shell, with the
// same arguments and input, and a note on stderr.
func TestShFallback(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash on PATH, which this machine lacks")
	}
	var out, errOut bytes.Buffer
	code := run([]string{"sh", "--workspace", t.TempDir(), "-c", `coproc true; read -r x; echo "$0:$1:$x"; exit 5`, "name", "arg"},
		strings.NewReader("input\n"), &out, &errOut)
	if code != 5 || out.String() != "name:arg:input\n" || !strings.Contains(errOut.String(), "corral sh: ran with the system shell") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

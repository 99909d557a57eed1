package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"corral/agent"
	"corral/agent/fakeapi"
)

// corralBin is the binary under test, built once for the package.
var corralBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "corral-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	corralBin = filepath.Join(dir, "corral")
	if runtime.GOOS == "windows" {
		corralBin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", corralBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building corral: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// e2e is one run of the binary with a clean environment: no credential
// from the host reaches it, and its state goes to a temporary directory.
type e2e struct {
	t         *testing.T
	workspace string
	state     string
	env       []string
}

func newE2E(t *testing.T) *e2e {
	e := &e2e{t: t, workspace: t.TempDir(), state: t.TempDir()}
	e.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CORRAL_STATE_DIR=" + e.state}
	return e
}

func (e *e2e) command(extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.Command(corralBin, args...)
	cmd.Dir = e.workspace
	cmd.Env = append(append([]string(nil), e.env...), extraEnv...)
	return cmd
}

func (e *e2e) run(extraEnv []string, args ...string) (stdout, stderr string, code int) {
	cmd := e.command(extraEnv, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running corral: %v", err)
	}
	return out.String(), errb.String(), code
}

func anthropicEnv(s *fakeapi.Server) []string {
	return []string{"ANTHROPIC_API_KEY=sk-ant-e2e", "ANTHROPIC_BASE_URL=" + s.URL}
}

// fileToolsWork reports whether read_file is implemented yet: the file
// tools are built in parallel with the agent.
func (e *e2e) fileToolsWork() bool {
	os.WriteFile(filepath.Join(e.workspace, "probe.txt"), []byte("probe-content\n"), 0o644)
	defer os.Remove(filepath.Join(e.workspace, "probe.txt"))
	out, _, code := e.run(nil, "tool", "read_file", `{"path":"probe.txt"}`)
	return code == 0 && strings.Contains(out, "probe-content")
}

func TestPrintModeE2E(t *testing.T) {
	e := newE2E(t)
	if !e.fileToolsWork() {
		t.Skip("read_file is not implemented in this tree yet (sandbox file tools); this test runs once they are")
	}
	hello := filepath.Join(e.workspace, "hello.txt")
	os.WriteFile(hello, []byte("hi from the file\n"), 0o644)
	// All four tools through the real executor: two calls per reply.
	srv := fakeapi.NewAnthropic(t,
		fakeapi.Reply("tool_use", fakeapi.Text("Reading it."),
			fakeapi.ToolUse("toolu_1", "read_file", `{"path":"hello.txt"}`),
			fakeapi.ToolUse("toolu_2", "list_files", `{}`)),
		fakeapi.Reply("tool_use",
			fakeapi.ToolUse("toolu_3", "edit_file", `{"path":"hello.txt","old_str":"hi from","new_str":"bye from"}`),
			fakeapi.ToolUse("toolu_4", "run_bash", `{"command":"echo ran"}`)),
		fakeapi.Reply("end_turn", fakeapi.Text("The file says bye now.")),
	)
	stdout, stderr, code := e.run(anthropicEnv(srv), "-p", "change hello.txt", "--auto-approve")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "Reading it.") || !strings.Contains(stdout, "The file says bye now.") {
		t.Errorf("stdout %q lacks the answer", stdout)
	}
	for _, line := range []string{"read hello.txt", "list .", "edit hello.txt", "run echo ran"} {
		if !strings.Contains(stderr, line) {
			t.Errorf("stderr lacks the tool line %q:\n%s", line, stderr)
		}
	}
	if data, _ := os.ReadFile(hello); string(data) != "bye from the file\n" {
		t.Errorf("hello.txt is %q after the edit", data)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if !strings.Contains(string(reqs[1].Body), "hi from the file") || !strings.Contains(string(reqs[1].Body), "hello.txt") {
		t.Errorf("the read and the listing did not reach the model: %s", reqs[1].Body)
	}
	if n := strings.Count(string(reqs[2].Body), `"tool_result"`); n != 4 {
		t.Errorf("the last request carries %d tool results, want 4", n)
	}
}

func TestOutputJSONE2E(t *testing.T) {
	e := newE2E(t)
	srv := fakeapi.NewOpenAI(t,
		fakeapi.Reply("tool_use", fakeapi.Thinking("hmm", ""), fakeapi.Text("Trying."), fakeapi.ToolUse("call_1", "no_such_tool", `{"x":1}`)),
		fakeapi.Reply("end_turn", fakeapi.Text("Done.")),
	)
	env := []string{"OPENAI_API_KEY=sk-openai-e2e", "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	stdout, stderr, code := e.run(env, "-p", "try", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var types []string
	var done agent.Event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var ev agent.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Type == "" {
			t.Fatalf("line %q is not an event: %v", sc.Text(), err)
		}
		types = append(types, ev.Type)
		if ev.Type == agent.EventDone {
			done = ev
		}
		if ev.Type == agent.EventToolResult && (!ev.IsError || !strings.Contains(ev.Text, "Unknown tool")) {
			t.Errorf("tool result %+v", ev)
		}
	}
	want := "session user thinking text tool_call usage tool_result text usage done"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
	if done.Status != agent.StatusFinished || done.Usage == nil || done.Usage.OutputTokens != 10 {
		t.Errorf("done %+v", done)
	}
}

func TestExitStatusE2E(t *testing.T) {
	cases := []struct {
		name     string
		steps    []fakeapi.Step
		args     []string
		noCreds  bool
		wantCode int
		wantErr  string
	}{
		{name: "finished", steps: []fakeapi.Step{fakeapi.Reply("end_turn", fakeapi.Text("ok"))}, wantCode: 0},
		{name: "fatal API error", steps: []fakeapi.Step{fakeapi.Error(400, "invalid_request_error", "model: not a model")}, wantCode: 1, wantErr: "not a model"},
		{name: "turn limit", steps: []fakeapi.Step{
			fakeapi.Reply("tool_use", fakeapi.ToolUse("t1", "no_such_tool", `{}`)),
			fakeapi.Reply("tool_use", fakeapi.ToolUse("t2", "no_such_tool", `{}`)),
		}, args: []string{"--max-turns", "2"}, wantCode: 1, wantErr: "--max-turns"},
		{name: "no credentials", noCreds: true, wantCode: 1, wantErr: "set ANTHROPIC_API_KEY"},
		{name: "no prompt", args: []string{"-p", ""}, wantCode: 2, wantErr: "corral -p PROMPT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newE2E(t)
			srv := fakeapi.NewAnthropic(t, c.steps...)
			var env []string
			if !c.noCreds {
				env = anthropicEnv(srv)
			}
			args := append([]string{"-p", "task"}, c.args...)
			_, stderr, code := e.run(env, args...)
			if code != c.wantCode {
				t.Errorf("exit %d, want %d; stderr: %s", code, c.wantCode, stderr)
			}
			if !strings.Contains(stderr, c.wantErr) {
				t.Errorf("stderr %q lacks %q", stderr, c.wantErr)
			}
		})
	}
}

// TestResumeAfterKill kills corral while it waits for the model's second
// reply, then continues the session and checks the conversation rebuilt on
// the wire.
func TestResumeAfterKill(t *testing.T) {
	e := newE2E(t)
	srv := fakeapi.NewAnthropic(t,
		fakeapi.Reply("tool_use", fakeapi.Text("Checking."), fakeapi.ToolUse("toolu_1", "no_such_tool", `{"step":1}`)),
		fakeapi.Step{Hang: true},
	)
	cmd := e.command(anthropicEnv(srv), "-p", "first task", "--auto-approve")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for n := range srv.Reached {
		if n == 2 {
			break
		}
	}
	cmd.Process.Kill()
	cmd.Wait()

	sessions, err := agent.ListSessions(filepath.Join(e.state, "sessions"))
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v", sessions, err)
	}
	path := sessions[0].Path
	recorded, _ := os.ReadFile(path)

	cases := []struct {
		name string
		// edit turns the file the kill left into the file to resume.
		edit       func([]byte) []byte
		wantResult string
	}{
		{"as killed", func(b []byte) []byte { return b }, "Unknown tool"},
		{"killed during the tool, with a torn last line", func(b []byte) []byte {
			// Keep what precedes the tool's result: the call is dangling.
			i := bytes.Index(b, []byte(`{"type":"tool_result"`))
			if i < 0 {
				t.Fatalf("no tool_result in %s", b)
			}
			return append(b[:i:i], `{"type":"tool_res`...)
		}, agent.InterruptedText},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, c.edit(recorded), 0o600); err != nil {
				t.Fatal(err)
			}
			srv2 := fakeapi.NewAnthropic(t, fakeapi.Reply("end_turn", fakeapi.Text("Resumed.")))
			stdout, stderr, code := e.run(anthropicEnv(srv2), "--continue", "-p", "second task")
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			var body struct {
				Messages []struct {
					Role    string `json:"role"`
					Content []struct {
						Type      string `json:"type"`
						Text      string `json:"text"`
						ID        string `json:"id"`
						ToolUseID string `json:"tool_use_id"`
						Content   []struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"content"`
				} `json:"messages"`
			}
			json.Unmarshal(srv2.Requests()[0].Body, &body)
			var trail []string
			for _, m := range body.Messages {
				for _, b := range m.Content {
					s := m.Role + ":" + b.Type
					switch b.Type {
					case "text":
						s += ":" + b.Text
					case "tool_use":
						s += ":" + b.ID
					case "tool_result":
						s += ":" + b.ToolUseID
						if len(b.Content) == 0 || !strings.Contains(b.Content[0].Text, c.wantResult) {
							t.Errorf("result %+v, want %q", b.Content, c.wantResult)
						}
					}
					trail = append(trail, s)
				}
			}
			want := "user:text:first task | assistant:text:Checking. | assistant:tool_use:toolu_1 | user:tool_result:toolu_1 | user:text:second task"
			if got := strings.Join(trail, " | "); got != want {
				t.Errorf("rebuilt conversation:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestInterruptE2E sends the interrupt signal while the model is thinking:
// the run stops at once with status 130 and the session can be continued.
func TestInterruptE2E(t *testing.T) {
	if !canInterrupt {
		t.Skip("no interrupt signal to send on this platform")
	}
	e := newE2E(t)
	srv := fakeapi.NewAnthropic(t, fakeapi.Step{Hang: true})
	cmd := e.command(anthropicEnv(srv), "-p", "wait")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-srv.Reached
	interrupt(cmd.Process)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("corral did not stop on interrupt")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130; stderr: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "--continue") {
		t.Errorf("stderr %q does not say how to continue", errb.String())
	}
}

// TestApprovalEventE2E: without a terminal and without --auto-approve, an
// edit is declined, and --output json says so as an approval event.
func TestApprovalEventE2E(t *testing.T) {
	e := newE2E(t)
	if !e.fileToolsWork() {
		t.Skip("edit_file is not implemented in this tree yet (sandbox file tools); this test runs once they are")
	}
	srv := fakeapi.NewAnthropic(t,
		fakeapi.Reply("tool_use", fakeapi.ToolUse("toolu_1", "edit_file", `{"path":"new.txt","old_str":"","new_str":"x"}`)),
		fakeapi.Reply("end_turn", fakeapi.Text("Could not.")),
	)
	stdout, stderr, code := e.run(anthropicEnv(srv), "-p", "make a file", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	var approval, result *agent.Event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var ev agent.Event
		json.Unmarshal(sc.Bytes(), &ev)
		switch ev.Type {
		case agent.EventApproval:
			approval = &ev
		case agent.EventToolResult:
			result = &ev
		}
	}
	if approval == nil || approval.Allowed == nil || *approval.Allowed || approval.Name != "edit_file" {
		t.Errorf("approval event %+v", approval)
	}
	if result == nil || !result.IsError || !strings.Contains(result.Text, "Not run") {
		t.Errorf("tool result %+v", result)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "new.txt")); err == nil {
		t.Errorf("the declined edit happened")
	}
}

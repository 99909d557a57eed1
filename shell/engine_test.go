package shell

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestResultText(t *testing.T) {
	tests := []struct {
		name string
		res  Result
		want string
	}{
		{"stdout only", Result{Stdout: "hi\n"}, "hi\n\n[exit 0]"},
		{"stdout and stderr", Result{Stdout: "out\n", Stderr: "err\n", ExitCode: 2}, "out\n[stderr]\nerr\n\n[exit 2]"},
		{"stdout without a final newline", Result{Stdout: "out", Stderr: "err"}, "out\n[stderr]\nerr\n[exit 0]"},
		{"stderr only", Result{Stderr: "boom\n", ExitCode: 1}, "[stderr]\nboom\n\n[exit 1]"},
		{"nothing", Result{}, "\n[exit 0]"},
		{"timeout", Result{Stdout: "partial\n", TimedOut: true, ExitCode: 124, Timeout: 2 * time.Second},
			"partial\n\n[timed out after 2s - process tree killed]\n[exit 124]"},
		{"interrupted", Result{Stdout: "so far\n", Interrupted: true, ExitCode: 130},
			"so far\n\n[interrupted - process tree killed]\n[exit 130]"},
		{"fallback", Result{Stdout: "x\n", Fallback: "ran with the system shell /bin/bash: the embedded shell cannot run coproc"},
			"[ran with the system shell /bin/bash: the embedded shell cannot run coproc]\nx\n\n[exit 0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.res.Text(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRunOutput(t *testing.T) {
	ws := workspace(t)
	tests := []struct {
		name, script string
		want         string
	}{
		{"echo", "echo hi", "hi\n\n[exit 0]"},
		{"stderr and status", "echo out; echo err >&2; exit 3", "out\n[stderr]\nerr\n\n[exit 3]"},
		{"a non-zero exit is still output", "false", "\n[exit 1]"},
		{"stdin is empty", "read x; echo status=$?", "status=1\n\n[exit 0]"},
		{"command not found", "no-such-command-corral", "[stderr]\nno-such-command-corral: command not found\n\n[exit 127]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(t, ws, tc.script, 10*time.Second).Text(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRunTimeoutText(t *testing.T) {
	need(t, "sleep")
	res := run(t, workspace(t), "echo started; sleep 30", 300*time.Millisecond)
	want := "started\n\n[timed out after 0.3s - process tree killed]\n[exit 124]"
	if got := res.Text(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRunInterrupted(t *testing.T) {
	need(t, "sleep")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	ws := workspace(t)
	res := Run(ctx, Options{Workspace: ws, Env: []string{"PATH=" + os.Getenv("PATH")}}, "echo so far; sleep 30")
	if !res.Interrupted || res.ExitCode != ExitInterrupted || !strings.HasPrefix(res.Text(), "so far\n") {
		t.Errorf("got %+v:\n%s", res, res.Text())
	}
}

// The clamp of a long output keeps its head and its tail, where the error is.
func TestRunLongOutputKeepsHeadAndTail(t *testing.T) {
	res := run(t, workspace(t), `echo FIRST; for ((i=0; i<20000; i++)); do echo line $i; done; echo LAST-ERROR >&2; exit 2`, time.Minute)
	text := res.Text()
	if n := len([]rune(text)); n > MaxChars {
		t.Errorf("text holds %d characters, want at most %d", n, MaxChars)
	}
	for _, want := range []string{"FIRST\n", "characters left out", "LAST-ERROR", "[exit 2]"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
}

// A gigabyte of output is drained in bounded memory and in bounded time.
func TestRunGigabyteBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 1 GB")
	}
	need(t, "yes", "head")
	var res Result
	growth := heapGrowth(func() {
		res = run(t, workspace(t), "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 1000000000; echo END", 45*time.Second)
	})
	if res.TimedOut {
		t.Skip("1 GB took over 45s on this machine")
	}
	if growth > 32<<20 {
		t.Errorf("heap grew by %d MiB", growth>>20)
	}
	text := res.Text()
	if !strings.HasPrefix(text, "0123456789") || !strings.Contains(text, "END\n") || !strings.Contains(text, "characters left out") {
		t.Errorf("unexpected text: %.200q ... %.200q", text, text[len(text)-200:])
	}
}

// heapGrowth runs fn and returns how far the heap rose above where it
// started, sampled every few milliseconds.
func heapGrowth(fn func()) uint64 {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := before.HeapAlloc
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc)
			}
		}
	}()
	fn()
	close(done)
	<-sampled
	return peak - before.HeapAlloc
}

func TestFallback(t *testing.T) {
	need(t, "bash")
	ws := workspace(t)
	res := run(t, ws, `coproc { echo from-coproc; }; read -r line <&"${COPROC[0]}"; echo "$line"`, 10*time.Second)
	text := res.Text()
	if !strings.HasPrefix(text, "[ran with the system shell ") || !strings.Contains(text, "cannot run coproc]") ||
		!strings.Contains(text, "from-coproc") || res.ExitCode != 0 {
		t.Errorf("got:\n%s", text)
	}

	// A script that does not parse goes to the system shell too, which
	// reports the error itself.
	res = run(t, ws, "echo (", 10*time.Second)
	if !strings.Contains(res.Fallback, "could not parse") || res.ExitCode == 0 {
		t.Errorf("got:\n%s", res.Text())
	}
}

func TestFallbackWithoutSystemShell(t *testing.T) {
	saved := unixShell
	unixShell = ""
	defer func() { unixShell = saved }()
	res := run(t, workspace(t), "coproc cat", 10*time.Second, "PATH="+t.TempDir())
	text := res.Text()
	if res.ExitCode != 127 || !strings.Contains(text, "not run: the embedded shell cannot run coproc, and no system shell was found") {
		t.Errorf("got:\n%s", text)
	}
}

func TestConfinement(t *testing.T) {
	ws := workspace(t)
	parent := filepath.Dir(ws.Dir())
	outside := filepath.Join(parent, filepath.Base(ws.Dir())+"-outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(outside)
	write(t, outside, "secret", "s3cret\n")
	write(t, ws.Dir(), "inside.txt", "inside\n")
	if err := os.Symlink(outside, filepath.Join(ws.Dir(), "link")); err != nil {
		t.Fatal(err)
	}
	rel := "../" + filepath.Base(outside)
	tests := []struct {
		name, script string
		want         []string
		created      string // must not exist afterwards
	}{
		{"redirect out of the root", "echo x > ../out", []string{"Refused: '../out' resolves outside the workspace root.", "[exit 1]"}, filepath.Join(parent, "out")},
		{"append out of the root", "echo x >> " + rel + "/new", []string{"Refused: '" + rel + "/new'", "[exit 1]"}, filepath.Join(outside, "new")},
		{"absolute redirect", "echo x > " + outside + "/abs", []string{"Refused:", "[exit 1]"}, filepath.Join(outside, "abs")},
		{"through a symlink", "echo x > link/via", []string{"[exit 1]"}, filepath.Join(outside, "via")},
		{"read out of the root", "cat < " + rel + "/secret", []string{"Refused:", "[exit 1]"}, ""},
		{"cd out of the root", "cd ..; pwd", []string{"cd: Refused: '..' resolves outside the workspace root.", ws.Dir() + "\n"}, ""},
		{"cd home out of the root", "HOME=/; cd; pwd", []string{"Refused:", ws.Dir() + "\n"}, ""},
		{"glob out of the root stays literal", "echo ../*", []string{"../*\n"}, ""},
		{"glob inside works", "echo *.txt", []string{"inside.txt\n"}, ""},
		{"file test out of the root", "[ -e " + rel + "/secret ] && echo found || echo absent", []string{"absent\n"}, ""},
		{"file test inside", "[ -f inside.txt ] && echo found", []string{"found\n"}, ""},
		{"source out of the root", "source " + rel + "/secret", []string{"Refused:"}, ""},
		{"inside works", "mkdir -p d && cd d && echo hi > f && cat f && pwd", []string{"hi\n", filepath.Join(ws.Dir(), "d")}, ""},
		{"dev null", "echo gone > /dev/null; echo kept", []string{"kept\n\n[exit 0]"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := run(t, ws, tc.script, 10*time.Second).Text()
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("result lacks %q:\n%s", w, text)
				}
			}
			if tc.created != "" && exists(tc.created) {
				t.Errorf("%s was created", tc.created)
			}
		})
	}
}

func TestCredentialScrub(t *testing.T) {
	need(t, "env")
	ws := workspace(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "KEEP_ME=visible"}
	for _, name := range SecretEnv {
		env = append(env, name+"=secret-"+strings.ToLower(name))
	}
	script := `echo "[$ANTHROPIC_API_KEY][$ANTHROPIC_AUTH_TOKEN][$OPENAI_API_KEY]"; env; bash -c 'echo "[$OPENAI_API_KEY]"' 2>/dev/null; echo $KEEP_ME`
	text := run(t, ws, script, 10*time.Second, env...).Text()
	if strings.Contains(text, "secret-") {
		t.Errorf("a secret leaked:\n%s", text)
	}
	if !strings.Contains(text, "[][][]") || !strings.Contains(text, "visible") {
		t.Errorf("unexpected output:\n%s", text)
	}
}

func TestScrubEnv(t *testing.T) {
	got := ScrubEnv([]string{"A=1", "ANTHROPIC_API_KEY=x", "openai_api_key=y", "=C:=C:\\", "B=2"})
	want := []string{"A=1", "=C:=C:\\", "B=2"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// With nothing on PATH, the Go coreutils stand in.
func TestCoreutilsWithEmptyPath(t *testing.T) {
	ws := workspace(t)
	write(t, ws.Dir(), "a.txt", "alpha\n")
	script := `mkdir -p x/y/z && cp a.txt x/y/z/b.txt && cat x/y/z/b.txt && ls x/y/z && rm x/y/z/b.txt && ls x/y/z | wc -l; ls x/y/z; echo done`
	res := run(t, ws, script, 10*time.Second, "PATH=")
	text := res.Text()
	for _, want := range []string{"alpha\n", "b.txt\n", "done\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("result lacks %q:\n%s", want, text)
		}
	}
	if exists(filepath.Join(ws.Dir(), "x/y/z/b.txt")) {
		t.Errorf("rm did not remove the file:\n%s", text)
	}
	if !strings.Contains(text, "wc: command not found") {
		t.Errorf("wc should be missing with an empty PATH:\n%s", text)
	}
}

func TestArgsAndDir(t *testing.T) {
	ws := workspace(t)
	if err := os.Mkdir(filepath.Join(ws.Dir(), "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := Run(context.Background(), Options{
		Workspace: ws, Dir: filepath.Join(ws.Dir(), "sub"), Name: "script", Args: []string{"a", "b c"},
	}, `echo "$0|$1|$2|$#"; pwd`)
	want := "script|a|b c|2\n" + filepath.Join(ws.Dir(), "sub") + "\n\n[exit 0]"
	if got := res.Text(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Runaway recursion stops the script, not corral: a Go stack overflow
// would kill the whole process.
func TestRunawayRecursion(t *testing.T) {
	res := run(t, workspace(t), "f() { f; }; f; echo not reached", time.Minute)
	if res.TimedOut || res.ExitCode != 1 || !strings.Contains(res.Stderr, "too deeply") {
		t.Errorf("got:\n%s", res.Text())
	}
}

func TestRedirectToEmptyName(t *testing.T) {
	res := run(t, workspace(t), "echo x > ''", time.Minute)
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "does not exist") {
		t.Errorf("got:\n%s", res.Text())
	}
}

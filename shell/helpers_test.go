package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"corral/sandbox"
)

func workspace(t testing.TB) *sandbox.Workspace {
	t.Helper()
	ws, err := sandbox.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func run(t testing.TB, ws *sandbox.Workspace, script string, timeout time.Duration, env ...string) Result {
	t.Helper()
	if env == nil {
		env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws.Dir()}
	}
	return Run(context.Background(), Options{Workspace: ws, Timeout: timeout, Env: env}, script)
}

func need(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("needs %s on PATH, which this machine lacks", p)
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

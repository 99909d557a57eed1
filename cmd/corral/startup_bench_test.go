package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkStartup measures what a user waits for: from process start to
// the first finished read_file, with a warm compilation cache.
func BenchmarkStartup(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "corral")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644)
	read := func() {
		out, err := exec.Command(bin, "tool", "read_file", `{"path":"a.txt"}`, "--workspace", dir).Output()
		if err != nil || string(out) != "hello\n" {
			b.Fatalf("corral tool read_file: %v %q", err, out)
		}
	}
	read() // warms the compilation cache
	for b.Loop() {
		read()
	}
}

// Command guestgen builds the file tools' WASI guest and records the hash of
// its sources beside it. Run it through `go generate ./sandbox`.
package main

import (
	"fmt"
	"os"
	"os/exec"

	"corral/sandbox/internal/guestsrc"
)

func main() {
	if err := generate(); err != nil {
		fmt.Fprintln(os.Stderr, "guestgen:", err)
		os.Exit(1)
	}
}

func generate() error {
	// go generate runs in the package directory: sandbox.
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w",
		"-o", "guest.wasm", "./internal/guest")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build guest: %w", err)
	}
	sum, err := guestsrc.Hash(".")
	if err != nil {
		return fmt.Errorf("hash guest sources: %w", err)
	}
	return os.WriteFile("guest.wasm.sum", []byte(sum+"\n"), 0o644)
}

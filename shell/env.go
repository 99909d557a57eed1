package shell

import (
	"os"
	"strings"
)

// SecretEnv names the environment variables corral takes a secret from. They
// are removed from the environment of every script and every program it
// starts, so that a command cannot print the key. The agent appends to it
// at start-up, before any script runs, for any other variable it reads a
// secret from.
var SecretEnv = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"}

// ScrubEnv returns env, a list of NAME=VALUE pairs, without the variables in
// SecretEnv. Names are compared case-insensitively because Windows treats
// them so, and dropping a same-named variable on Unix costs nothing.
func ScrubEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" && strings.HasPrefix(kv, "=") {
			// Windows keeps per-drive directories as "=C:=C:\...".
			out = append(out, kv)
			continue
		}
		if isSecret(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func isSecret(name string) bool {
	for _, s := range SecretEnv {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	return false
}

// baseEnv is the environment a run starts from.
func baseEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	return ScrubEnv(env)
}

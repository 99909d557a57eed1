package shell

import (
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// lookPath finds a program on the PATH of env, a list of NAME=VALUE pairs:
// the script's PATH, not corral's, decides.
func lookPath(env []string, name string) (string, error) {
	environ := expand.ListEnviron(env...)
	dir := environ.Get("PWD").String()
	return interp.LookPathDir(dir, environ, name)
}

// Package shell is corral's embedded bash: it runs a script with the pure-Go
// interpreter of mvdan.cc/sh, so that run_bash and `corral sh` work on a
// machine without bash, and it makes sure that nothing a script starts
// outlives it.
//
// The engine has four concerns, each in its own file:
//
//   - confine.go: the shell's own file access (redirections, source, cd,
//     globbing, file tests) goes through the workspace's sandbox. Programs
//     the script starts are NOT confined by this; they can open any file the
//     user can.
//   - proc*.go: every external program starts in its own process group (a
//     Job Object on Windows), and at the end of a run, on timeout or on
//     cancellation, the whole tree is killed, including descendants that left
//     the group (found as adopted orphans: corral is a child subreaper on
//     Linux).
//   - detect.go and fallback.go: a script the interpreter cannot run is
//     recognised before it starts and handed whole to the system shell.
//   - clamp.go: output is kept head and tail, in bounded memory, and clamped
//     for the model.
package shell

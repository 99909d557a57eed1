package main

import (
	"errors"
	"io"
)

func runAgent(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errors.New("the agent is not available yet; see 'corral --help'")
}

package main

import (
	"errors"
	"io"
)

func runSh(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errors.New("corral sh is not available yet")
}

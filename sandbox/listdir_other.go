//go:build !unix

package sandbox

import "os"

// listHandle returns dir itself: see the Unix version for why it exists.
func listHandle(dir *os.File) *os.File { return dir }

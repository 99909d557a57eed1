//go:build !unix

package sandbox

var newFileMode uint32 = 0o666

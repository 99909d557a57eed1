//go:build !unix

package sandbox

const nonblockFlag = 0

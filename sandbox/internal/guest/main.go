//go:build wasip1

// Command guest is the WASI module that runs corral's file tools. The host
// builds it with `go generate ./sandbox` and embeds the result; it sees only
// the workspace, mounted at / through an os.Root.
//
// It is a reactor: the host starts it once and then calls its exports. A
// call costs about 0.1 µs, and some 8 µs more once it allocates (the Go
// runtime's own cost, measured), where instantiating a module costs
// milliseconds. A request is written into the buffer that alloc returns, and
// call returns where the reply lies, packed as pointer<<32 | length. The
// reply stays valid until the next call; so does the buffer, which the host
// reuses for every request that fits.
package main

import (
	"unsafe"

	"corral/sandbox/internal/fileops"
)

var in, out []byte

//go:wasmexport alloc
func alloc(n uint32) unsafe.Pointer {
	if uint32(cap(in)) < n {
		in = make([]byte, n)
	}
	in = in[:cap(in)]
	return unsafe.Pointer(unsafe.SliceData(in))
}

//go:wasmexport call
func call(n uint32) uint64 {
	out = fileops.Serve(fileops.Ops{Dir: "/"}, in[:n])
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(out))))<<32 | uint64(len(out))
}

func main() {}

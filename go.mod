module corral

go 1.26.8

require (
	github.com/tetratelabs/wazero v1.12.0
	golang.org/x/sys v0.48.0
	mvdan.cc/sh/v3 v3.14.1
	mvdan.cc/sh/x v0.0.0-20260922090537-aebdf2b86f56
)

require (
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/klauspost/compress v1.18.0 // indirect
	github.com/klauspost/pgzip v1.2.6 // indirect
	github.com/pierrec/lz4/v4 v4.1.22 // indirect
	github.com/u-root/u-root v0.15.1-0.20251208185023-2f8c7e763cf8 // indirect
	github.com/u-root/uio v0.0.0-20240224005618-d2acac8f3701 // indirect
	golang.org/x/term v0.45.0 // indirect
)

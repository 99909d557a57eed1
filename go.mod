module corral

go 1.26.8

require golang.org/x/sys v0.48.0

require github.com/tetratelabs/wazero v1.12.0 // indirect

package shapes

import _ "unsafe" // for go:linkname

// nanotime is the runtime's clock, declared without a body.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

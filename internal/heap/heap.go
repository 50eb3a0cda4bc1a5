// Package heap measures the server's heap for the transports' tests that
// check a client cannot grow it.
package heap

import "runtime"

// InUse is the heap in use after a collection, in bytes.
func InUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

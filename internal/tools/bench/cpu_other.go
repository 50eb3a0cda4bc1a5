//go:build !unix

package bench

import "time"

func selfCPU() (time.Duration, bool) { return 0, false }

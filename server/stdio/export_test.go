package stdio

import "time"

// SetDrainTimeout lowers drainTimeout for a test; the func it returns puts
// it back.
func SetDrainTimeout(d time.Duration) (restore func()) {
	old := drainTimeout
	drainTimeout = d
	return func() { drainTimeout = old }
}

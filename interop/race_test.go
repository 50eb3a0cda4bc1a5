//go:build race

package interop_test

const raceEnabled = true

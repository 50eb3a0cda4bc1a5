package bench

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	line := "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 1500 0 0 0 250 130 0 0 20 0 9 0 12345 1234567 890 18446744073709551615\n"
	got, err := parseStatCPU([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := 380 * clockTick; got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"", "12 (x) S 1 2", "12 x S"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\tserver\nVmPeak:\t  20000 kB\nVmRSS:\t   15344 kB\nThreads:\t7\n"
	got, err := parseStatusKB([]byte(status), "VmRSS:")
	if err != nil || got != 15344<<10 {
		t.Errorf("got %d, %v", got, err)
	}
	if _, err := parseStatusKB([]byte("Name:\tx\n"), "VmRSS:"); err == nil {
		t.Error("no VmRSS: no error")
	}
}

func TestProcSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	rss, err := procRSS(os.Getpid())
	if err != nil || rss <= 0 {
		t.Errorf("rss %d, %v", rss, err)
	}
	// Burn a little CPU so that the counter moves.
	end := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(end) {
	}
	if cpu, err := procCPU(os.Getpid()); err != nil || cpu <= 0 {
		t.Errorf("cpu %v, %v", cpu, err)
	}
	if self, ok := selfCPU(); !ok || self <= 0 {
		t.Errorf("self CPU %v, %v", self, ok)
	}
	if _, err := procRSS(1 << 30); err == nil {
		t.Error("no such process: no error")
	}
	m, err := procMemory(os.Getpid())
	if err != nil || m.PeakRSS < rss/2 || m.Anon <= 0 || m.File <= 0 || m.Anon+m.File > 2*m.PeakRSS {
		t.Errorf("memory %+v, %v (VmRSS %d)", m, err, rss)
	}
	if _, err := procMemory(1 << 30); err == nil {
		t.Error("no such process: no error")
	}
}

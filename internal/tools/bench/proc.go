package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// procCPU returns the CPU time (user + system, all threads) that process
// pid has used so far, from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/PID/stat line. The command name (field 2) is in parentheses and
// may hold spaces, so fields are counted after its closing parenthesis.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc stat line")
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("malformed /proc stat line")
	}
	ut, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	st, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc stat line")
	}
	return time.Duration(ut+st) * clockTick, nil
}

// procRSS returns the resident set size of process pid in bytes, from
// VmRSS in /proc/PID/status.
func procRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseStatusKB(b, "VmRSS:")
}

// Memory is a server's memory, from /proc/PID/status, in bytes: its
// resident set at rest (before the first round), and after the load the
// high-water mark of its resident set, and the resident set as anonymous
// (private: heap, stacks) and file-backed (the binary's pages, shared and
// clean, which the kernel can drop and read again).
type Memory struct {
	Rest    int64 `json:"rest_rss"` // VmRSS before the load
	PeakRSS int64 `json:"peak_rss"` // VmHWM
	Anon    int64 `json:"anon"`     // RssAnon
	File    int64 `json:"file"`     // RssFile
}

// procMemory reads the Memory of process pid.
func procMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"VmHWM:", &m.PeakRSS}, {"RssAnon:", &m.Anon}, {"RssFile:", &m.File}} {
		if *f.dst, err = parseStatusKB(b, f.name); err != nil {
			return Memory{}, err
		}
	}
	return m, nil
}

// parseStatusKB reads a "Name:   123 kB" line of /proc/PID/status.
func parseStatusKB(b []byte, name string) (int64, error) {
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte(name))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			break
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			break
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s line in /proc status", name)
}

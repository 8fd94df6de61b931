package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is Linux's USER_HZ, the unit of /proc/<pid>/stat's CPU times.
const clockTick = time.Second / 100

// procStat is what loadgen reads of /proc/<pid>/stat.
type procStat struct {
	ppid                         int
	utime, stime, cutime, cstime time.Duration
}

// parseStat reads a /proc/<pid>/stat line. The command name, in
// parentheses, may hold spaces and parentheses: the fields after it start
// after the last ")".
func parseStat(line string) (procStat, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("no command name in %q", line)
	}
	f := strings.Fields(line[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime..cstime 14..17.
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("short stat line %q", line)
	}
	var n [5]int64
	for k, idx := range []int{1, 11, 12, 13, 14} {
		v, err := strconv.ParseInt(f[idx], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("stat field %d: %v", idx+3, err)
		}
		n[k] = v
	}
	return procStat{ppid: int(n[0]), utime: time.Duration(n[1]) * clockTick, stime: time.Duration(n[2]) * clockTick,
		cutime: time.Duration(n[3]) * clockTick, cstime: time.Duration(n[4]) * clockTick}, nil
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(b))
}

// processCPU is the user and system CPU time pid has used, all its threads.
func processCPU(pid int) (time.Duration, error) {
	s, err := readStat(pid)
	return s.utime + s.stime, err
}

// treeCPU is the CPU time of a PostgreSQL cluster: its postmaster, the
// children it has reaped (cutime, cstime) and its live children. A backend
// that exits between two readings moves from the last term to the second,
// so differences stay right.
func treeCPU(postmaster int) (time.Duration, error) {
	s, err := readStat(postmaster)
	if err != nil {
		return 0, err
	}
	total := s.utime + s.stime + s.cutime + s.cstime
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == postmaster {
			continue
		}
		c, err := readStat(pid)
		if err != nil || c.ppid != postmaster {
			continue // gone, or not the cluster's
		}
		total += c.utime + c.stime
	}
	return total, nil
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

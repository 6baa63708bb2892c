package localnet

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Metrics is one reading of a Prometheus text endpoint: each sample's
// value by its series, the metric name with its labels as the endpoint
// writes them (`name{a="x"}`).
type Metrics map[string]float64

// Sum adds every series of metric name, whatever its labels.
func (m Metrics) Sum(name string) float64 {
	var sum float64
	for series, v := range m {
		if series == name || strings.HasPrefix(series, name+"{") {
			sum += v
		}
	}
	return sum
}

// Has reports whether any series of metric name is in m.
func (m Metrics) Has(name string) bool {
	for series := range m {
		if series == name || strings.HasPrefix(series, name+"{") {
			return true
		}
	}
	return false
}

// NodeMetrics reads validator i's Prometheus endpoint (CometBFT's
// instrumentation port), which serves CometBFT's series (cometbft_*) and
// the app's (inference_*; the script turns telemetry on): the one
// endpoint a Prometheus scrapes per node (docs/metrics.md).
func (n *Net) NodeMetrics(i int) (Metrics, error) { return readMetrics(n.Prometheus(i) + "/metrics") }

// RESTPrometheus is validator i's REST server's Prometheus format, which
// serves no series (404): the app's are on NodeMetrics' endpoint.
func (n *Net) RESTPrometheus(i int) string { return n.REST(i) + "/metrics?format=prometheus" }

// maxMetricsLine bounds one line of an endpoint's answer.
const maxMetricsLine = 64 << 10

func readMetrics(url string) (Metrics, error) {
	res, err := httpClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, res.Status)
	}
	m := Metrics{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 4096), maxMetricsLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// "series value [timestamp]"; labels never hold "} " in our metrics.
		cut := strings.LastIndex(line, "} ")
		if cut < 0 {
			cut = strings.Index(line, " ")
		} else {
			cut++
		}
		if cut <= 0 {
			return nil, fmt.Errorf("GET %s: line %q", url, line)
		}
		fields := strings.Fields(line[cut:])
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("GET %s: line %q: %w", url, line, err)
		}
		m[line[:cut]] = v
	}
	return m, sc.Err()
}

// pidOf reads the pid file the script keeps for a process: node<i> for a
// validator, executors for the fleet.
func (n *Net) pidOf(name string) int {
	n.t.Helper()
	bz, err := os.ReadFile(filepath.Join(n.Home, "pids", name+".pid"))
	if err != nil {
		n.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(bz)))
	if err != nil {
		n.t.Fatalf("pid file %s: %v", name, err)
	}
	return pid
}

// CPU is the processor time a process has used so far (user + system).
func (n *Net) CPU(name string) time.Duration {
	n.t.Helper()
	d, err := cpuTime(n.pidOf(name))
	if err != nil {
		n.t.Fatal(err)
	}
	return d
}

// ValidatorCPU is validator i's CPU time so far.
func (n *Net) ValidatorCPU(i int) time.Duration { n.t.Helper(); return n.CPU(fmt.Sprintf("node%d", i)) }

// cpuTime reads utime + stime of pid from /proc/<pid>/stat.
func cpuTime(pid int) (time.Duration, error) {
	bz, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// "pid (comm) state ...": comm may hold spaces and parentheses, so the
	// fields are counted from the last ')'; utime and stime are the 14th
	// and 15th fields of the line, the 12th and 13th after it.
	s := string(bz)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	hz, err := clockTicks()
	if err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / time.Duration(hz), nil
}

// clockTicks is the kernel's clock ticks per second (getconf CLK_TCK), the
// unit of /proc/<pid>/stat's times.
func clockTicks() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "getconf", "CLK_TCK").Output()
	if err != nil {
		return 0, fmt.Errorf("getconf CLK_TCK: %w", err)
	}
	hz, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil || hz <= 0 {
		return 0, fmt.Errorf("getconf CLK_TCK: %q", out)
	}
	return hz, nil
}

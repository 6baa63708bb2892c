package monitor_test

// The monitor against a fleet of loopback executors, 30% of them hanging,
// read once a second as ExtendVote reads it. It uses only the monitor's
// exported API, so scripts/bench-monitor.sh runs this same file against an
// older monitor for the before/after table.
//
//	go test ./monitor/ -run '^$' -bench MonitorScale -benchtime 1x
//
// MONITOR_BENCH_EXECUTORS (default "1000,10000"), MONITOR_BENCH_SECONDS
// (measured, default 15, after a 5 s warm-up), MONITOR_BENCH_HANG_PCT
// (default 30), MONITOR_BENCH_CONCURRENCY and MONITOR_BENCH_INTERVAL_MS
// (default: DefaultConfig below 5,000 executors, 2048 slots at an interval
// of 2s from there) tune it; an older monitor that refuses the concurrency
// gets half of it until it accepts. The executors are served by child processes (this
// test binary, re-executed), at most 5,000 each, so that listeners and
// both ends of every connection fit the file descriptor limit.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"cosmossdk.io/log/v2"

	"github.com/inferenced/inferenced/monitor"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

const (
	fleetEnv      = "MONITOR_BENCH_FLEET" // "first,count": this process serves a fleet
	perFleet      = 5000
	warmUp        = 5 * time.Second
	largeGroup    = 5000
	largeConc     = 2048
	largeInterval = 2 * time.Second
)

// hangPct is the share of executors that never answer (MONITOR_BENCH_HANG_PCT,
// default 30); the fleets read it from the same environment.
var hangPct = envInt("MONITOR_BENCH_HANG_PCT", 30)

// hangs is which executors hang: hangPct% of them, spread over the group.
func hangs(i int) bool { return (i*37)%100 < hangPct }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

func init() {
	if spec := os.Getenv(fleetEnv); spec != "" {
		os.Exit(serveFleet(spec))
	}
}

// serveFleet serves executors first..first+count-1 on their own loopback
// ports, prints the ports, then answers "count" on stdin with the health
// requests received, until stdin closes.
func serveFleet(spec string) int {
	var first, count int
	if _, err := fmt.Sscanf(spec, "%d,%d", &first, &count); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		return 2
	}
	var served atomic.Int64
	out := bufio.NewWriter(os.Stdout)
	for i := first; i < first+count; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleet:", err)
			return 1
		}
		hang := hangs(i)
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served.Add(1)
			if hang {
				<-r.Context().Done()
			}
		})}
		go func() { _ = srv.Serve(l) }()
		fmt.Fprintln(out, l.Addr().(*net.TCPAddr).Port)
	}
	fmt.Fprintln(out, "ready")
	_ = out.Flush()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fmt.Println(served.Load())
	}
	return 0
}

// fleet is a child process serving part of the executors.
type fleet struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

func startFleets(b *testing.B, n int) ([]monitor.Member, []*fleet) {
	b.Helper()
	var members []monitor.Member
	var fleets []*fleet
	for first := 0; first < n; first += perFleet {
		count := min(perFleet, n-first)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%d", fleetEnv, first, count))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		f := &fleet{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
		fleets = append(fleets, f)
		b.Cleanup(func() { _ = f.stdin.Close(); _ = f.cmd.Wait() })
		for i := first; f.out.Scan() && f.out.Text() != "ready"; i++ {
			members = append(members, monitor.Member{Address: fmt.Sprintf("exec%d", i), URL: "http://127.0.0.1:" + f.out.Text() + "/v1"})
		}
	}
	if len(members) != n {
		b.Fatalf("fleets serve %d executors, want %d", len(members), n)
	}
	return members, fleets
}

func requests(b *testing.B, fleets []*fleet) int {
	b.Helper()
	total := 0
	for _, f := range fleets {
		if _, err := io.WriteString(f.stdin, "count\n"); err != nil || !f.out.Scan() {
			b.Fatalf("fleet gone: %v", err)
		}
		v, err := strconv.Atoi(f.out.Text())
		if err != nil {
			b.Fatal(err)
		}
		total += v
	}
	return total
}

func benchConfig(n int) monitor.Config {
	cfg := monitor.DefaultConfig()
	cfg.AllowPrivate = true
	if n >= largeGroup {
		cfg.MaxConcurrency, cfg.ProbeInterval = largeConc, largeInterval
	}
	if v := envInt("MONITOR_BENCH_CONCURRENCY", 0); v > 0 {
		cfg.MaxConcurrency = v
	}
	if v := envInt("MONITOR_BENCH_INTERVAL_MS", 0); v > 0 {
		cfg.ProbeInterval = time.Duration(v) * time.Millisecond
	}
	return cfg
}

func BenchmarkMonitorScale(b *testing.B) {
	sizes := "1000,10000"
	if v := os.Getenv("MONITOR_BENCH_EXECUTORS"); v != "" {
		sizes = v
	}
	seconds := max(envInt("MONITOR_BENCH_SECONDS", 15), 1)
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("executors=%d", n), func(b *testing.B) { benchScale(b, n, seconds) })
	}
}

func benchScale(b *testing.B, n, seconds int) {
	members, fleets := startFleets(b, n)
	cfg := benchConfig(n)
	group := monitor.Group{Epoch: 1, Members: members}
	source := func(context.Context) (monitor.Group, error) { return group, nil }
	m, err := monitor.New(cfg, source, log.NewNopLogger())
	for err != nil && cfg.MaxConcurrency > 1 { // an older monitor caps max-concurrency lower
		cfg.MaxConcurrency /= 2
		m, err = monitor.New(cfg, source, log.NewNopLogger())
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	m.Start()
	time.Sleep(warmUp)
	before, cpu0, t0 := requests(b, fleets), cpuTime(), time.Now()
	var fresh, healthyOK, hangingMiss, minFresh, snapshotNs float64 = 0, 0, 0, 1, 0
	for range seconds {
		time.Sleep(time.Second)
		start := time.Now()
		vs, err := m.Snapshot(1, n)
		snapshotNs += float64(time.Since(start).Nanoseconds())
		if err != nil {
			b.Fatal(err)
		}
		var known, ok, miss, healthy int
		for i, v := range vs {
			if v != verdict.Unknown {
				known++
			}
			switch {
			case !hangs(i):
				healthy++
				if v == verdict.OK {
					ok++
				}
			case v == verdict.Miss:
				miss++
			}
		}
		f := float64(known) / float64(n)
		fresh += f
		minFresh = min(minFresh, f)
		if healthy > 0 {
			healthyOK += float64(ok) / float64(healthy)
		} else {
			healthyOK++ // no healthy executor to miss
		}
		if healthy < n {
			hangingMiss += float64(miss) / float64(n-healthy)
		}
	}
	elapsed := time.Since(t0).Seconds()
	probes := float64(requests(b, fleets)-before) / elapsed
	cpu := (cpuTime() - cpu0).Seconds() / elapsed
	fds := openFDs()
	m.Stop()
	b.StopTimer()
	k := float64(seconds)
	b.ReportMetric(fresh/k, "fresh")
	b.ReportMetric(minFresh, "fresh_min")
	b.ReportMetric(healthyOK/k, "healthy_ok")
	b.ReportMetric(hangingMiss/k, "hanging_miss")
	b.ReportMetric(probes, "probes/s")
	b.ReportMetric(cpu, "cpu_cores")
	b.ReportMetric(float64(fds), "fds")
	b.ReportMetric(snapshotNs/k/1e3, "snapshot_us")
	b.ReportMetric(float64(cfg.MaxConcurrency), "concurrency")
	b.ReportMetric(cfg.ProbeInterval.Seconds(), "interval_s")
	b.ReportMetric(float64(hangPct), "hang_pct")
}

// cpuTime is the CPU this process (the monitor; the fleets are children)
// used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

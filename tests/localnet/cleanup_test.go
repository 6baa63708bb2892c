package localnet_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// cleanupNet is this test's network: 2 validators, so that its highest port
// at offset 5900 (26658+100+5900 = 32658) stays below the ephemeral range.
var cleanupNet = ln.Config{PortOffset: 5900, Validators: 2, Executors: 2}

// TestLocalnetRunStopsOnCtrlCWithClosedStdout runs `make localnet`'s script
// as `make localnet 2>&1 | tee run.log` would: its stdout and stderr are a
// pipe, and the reader of that pipe is gone when Ctrl-C arrives (the terminal
// interrupts tee too). Every process the script started must still be
// stopped, and the script itself must exit.
func TestLocalnetRunStopsOnCtrlCWithClosedStdout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 2-validator network; run without -short")
	}
	root := ln.RepoRoot(t)
	home := t.TempDir()
	env := append(ln.ScriptEnv(t, cleanupNet, home), "DEMO=0")

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	script := exec.Command("bash", filepath.Join(root, "scripts", "localnet-run.sh"))
	script.Env = env
	script.Stdout, script.Stderr = w, w
	// Its own process group, the terminal's foreground job: Ctrl-C is a
	// SIGINT to the whole group.
	script.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := script.Start(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close() // the script holds the only write end now
	pgid := script.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- script.Wait() }()
	var pids []int
	// Whatever the outcome, nothing of this network outlives the test.
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		stop := exec.Command("bash", filepath.Join(root, "scripts", "localnet.sh"), "stop")
		stop.Env = env
		if out, err := stop.CombinedOutput(); err != nil {
			t.Logf("localnet stop: %v\n%s", err, out)
		}
	})

	// Read the script's output until it prints its first per-block line:
	// the network and the load driver are up.
	var out []string
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.After(4 * time.Minute)
	for up := false; !up; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("script ended before the first block line:\n%s", strings.Join(out, "\n"))
			}
			out = append(out, l)
			up = strings.HasPrefix(l, "height ")
		case <-deadline:
			t.Fatalf("no block line after 4 minutes:\n%s", strings.Join(out, "\n"))
		}
	}
	pids = readPids(t, filepath.Join(home, "pids"))
	if len(pids) != 4 {
		t.Fatalf("pids: got %d, want 2 validators + 2 executors", len(pids))
	}

	// The pipe's reader goes away, then Ctrl-C.
	_ = r.Close()
	for range lines { // drain what the reader goroutine still holds
	}
	if err := syscall.Kill(-pgid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}

	const bound = 90 * time.Second // the load driver settles for a few blocks first
	select {
	case err := <-exited:
		t.Logf("script exited: %v", err)
	case <-time.After(bound):
		t.Errorf("script still running %v after Ctrl-C", bound)
	}
	gone := time.Now().Add(15 * time.Second)
	for {
		var alive []int
		for _, p := range pids {
			if running(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			break
		}
		if time.Now().After(gone) {
			t.Fatalf("still running after Ctrl-C: pids %v of %v (output before Ctrl-C:\n%s)",
				alive, pids, strings.Join(out, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The load driver is no pid file's: it is in the script's group.
	if err := syscall.Kill(-pgid, 0); err != syscall.ESRCH {
		t.Fatalf("a process of the script's group (the load driver?) is still running: kill -0: %v", err)
	}
}

// readPids reads the process ids scripts/localnet.sh recorded.
func readPids(t *testing.T, dir string) []int {
	files, err := filepath.Glob(filepath.Join(dir, "*.pid"))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range files {
		bz, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := strconv.Atoi(strings.TrimSpace(string(bz)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pids = append(pids, p)
	}
	return pids
}

// running reports whether pid is a live process: a zombie, killed but not
// yet reaped by its new parent, is not.
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) state ...": comm may hold spaces and parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

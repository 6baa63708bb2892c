package localnet

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Ports is every port of a network, as scripts/localnet.sh defines them:
// the harness asks the script (`localnet.sh ports`) instead of computing
// them again, so the one definition is the script's port functions. Every
// address is on 127.0.0.1.
type Ports struct {
	byKind map[string][]int // kind -> port of index 0, 1, ...
	fleet  bool             // every executor in one process
}

// The kinds `localnet.sh ports` prints.
const (
	portRPC        = "rpc"
	portREST       = "rest"
	portGRPC       = "grpc"
	portPrometheus = "prometheus"
	portExec       = "exec"
	portFleet      = "fleet" // not a port: "fleet 0 1" when the executors share a process
)

// portsOf runs `localnet.sh ports` for the network c and reads its lines,
// "<kind> <index> <port>", indexes in order from 0.
func portsOf(root string, c Config) (Ports, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "localnet.sh"), "ports")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT_OFFSET=%d", c.PortOffset))
	cmd.Env = append(cmd.Env, c.env()...)
	out, err := cmd.Output()
	if err != nil {
		return Ports{}, fmt.Errorf("localnet.sh ports: %w", err)
	}
	p := Ports{byKind: map[string][]int{}}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			return Ports{}, fmt.Errorf("localnet.sh ports: line %q", sc.Text())
		}
		index, err1 := strconv.Atoi(f[1])
		port, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || index != len(p.byKind[f[0]]) {
			return Ports{}, fmt.Errorf("localnet.sh ports: line %q", sc.Text())
		}
		if f[0] == portFleet {
			p.fleet = port == 1
			continue
		}
		p.byKind[f[0]] = append(p.byKind[f[0]], port)
	}
	if len(p.byKind[portRPC]) == 0 {
		return Ports{}, fmt.Errorf("localnet.sh ports: no validator ports in %q", out)
	}
	return p, nil
}

// port is the port of kind for index i; an index the network does not have
// is port 0, which nothing listens on.
func (p Ports) port(kind string, i int) int {
	if ports := p.byKind[kind]; i >= 0 && i < len(ports) {
		return ports[i]
	}
	return 0
}

// highest is the highest port of the network.
func (p Ports) highest() int {
	top := 0
	for _, ports := range p.byKind {
		for _, port := range ports {
			top = max(top, port)
		}
	}
	return top
}

// ephemeralPorts is where Linux's ephemeral range begins: a port there may
// be held by any outgoing connection.
const ephemeralPorts = 32768

func localURL(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }

// RPC is validator i's CometBFT RPC, http://127.0.0.1:port.
func (n *Net) RPC(i int) string { return localURL(n.ports.port(portRPC, i)) }

// RPCAddr is node 0's RPC as the CLI's --node flag takes it.
func (n *Net) RPCAddr() string {
	return fmt.Sprintf("tcp://127.0.0.1:%d", n.ports.port(portRPC, 0))
}

// REST is validator i's REST (gRPC gateway) server.
func (n *Net) REST(i int) string { return localURL(n.ports.port(portREST, i)) }

// Prometheus is validator i's Prometheus endpoint (/metrics): CometBFT's
// series and the app's.
func (n *Net) Prometheus(i int) string { return localURL(n.ports.port(portPrometheus, i)) }

// GRPC is validator i's gRPC address, host:port.
func (n *Net) GRPC(i int) string {
	return fmt.Sprintf("127.0.0.1:%d", n.ports.port(portGRPC, i))
}

// Exec is fake executor j's base URL (its inference and control API).
func (n *Net) Exec(j int) string { return localURL(n.ports.port(portExec, j)) }

// Fleet reports whether one fake-executor process serves every executor
// (its bulk control then switches them at once).
func (n *Net) Fleet() bool { return n.ports.fleet }

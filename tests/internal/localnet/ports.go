package localnet

import "fmt"

// The ports of a network, for validator i and fake executor j (0-based).
// They mirror the port functions of scripts/localnet.sh (rpc_port,
// api_port, grpc_port, exec_port, and abci_port, the highest), which
// chooses them: change both together. Every address is on 127.0.0.1.
func rpcPort(offset, i int) int  { return 26657 + 100*i + offset }
func restPort(offset, i int) int { return 1317 + 100*i + offset }
func grpcPort(offset, i int) int { return 9090 + 100*i + offset }
func execPort(offset, j int) int { return 8080 + j + offset }
func abciPort(offset, i int) int { return 26658 + 100*i + offset }

// ephemeralPorts is where Linux's ephemeral range begins: a port there may
// be held by any outgoing connection.
const ephemeralPorts = 32768

// highestPort is the highest port a network of c listens on: the last
// validator's ABCI port.
func highestPort(c Config) int { return abciPort(c.PortOffset, c.validators()-1) }

// RPC is validator i's CometBFT RPC, http://127.0.0.1:port.
func (n *Net) RPC(i int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", rpcPort(n.cfg.PortOffset, i))
}

// RPCAddr is node 0's RPC as the CLI's --node flag takes it.
func (n *Net) RPCAddr() string {
	return fmt.Sprintf("tcp://127.0.0.1:%d", rpcPort(n.cfg.PortOffset, 0))
}

// REST is validator i's REST (gRPC gateway) server.
func (n *Net) REST(i int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", restPort(n.cfg.PortOffset, i))
}

// GRPC is validator i's gRPC address, host:port.
func (n *Net) GRPC(i int) string { return fmt.Sprintf("127.0.0.1:%d", grpcPort(n.cfg.PortOffset, i)) }

// Exec is fake executor j's base URL (its inference and control API).
func (n *Net) Exec(j int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", execPort(n.cfg.PortOffset, j))
}

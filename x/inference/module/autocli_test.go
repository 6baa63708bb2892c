package module_test

import (
	"testing"

	autocliv1 "cosmossdk.io/api/cosmos/autocli/v1"
	"github.com/cosmos/gogoproto/proto"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/inferenced/inferenced/x/inference/module"
)

// Every query and message has a CLI entry (or is skipped on purpose), so a
// new RPC such as the transfer-agent ones cannot ship without a command.
func TestAutoCLICoversEveryRPC(t *testing.T) {
	opts := module.AppModule{}.AutoCLIOptions()
	for _, svc := range []struct {
		name    string
		entries map[string]bool
	}{
		{opts.Query.Service, uses(opts.Query.RpcCommandOptions)},
		{opts.Tx.Service, uses(opts.Tx.RpcCommandOptions)},
	} {
		d, err := proto.HybridResolver.FindDescriptorByName(protoreflect.FullName(svc.name))
		require.NoError(t, err, svc.name)
		methods := d.(protoreflect.ServiceDescriptor).Methods()
		for i := range methods.Len() {
			m := string(methods.Get(i).Name())
			require.True(t, svc.entries[m], "%s.%s has no autocli entry", svc.name, m)
		}
	}
	q := uses(opts.Query.RpcCommandOptions)
	tx := uses(opts.Tx.RpcCommandOptions)
	for _, m := range []string{"TransferAgent", "TransferAgents"} {
		require.True(t, q[m], m)
	}
	for _, m := range []string{"RegisterTransferAgent", "LeaveTransferAgent"} {
		require.True(t, tx[m], m)
	}
}

func uses(entries []*autocliv1.RpcCommandOptions) map[string]bool {
	out := make(map[string]bool, len(entries))
	for _, e := range entries {
		out[e.RpcMethod] = true
	}
	return out
}

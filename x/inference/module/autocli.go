package module

import (
	autocliv1 "cosmossdk.io/api/cosmos/autocli/v1"
)

// AutoCLIOptions describes the CLI for every query and message.
func (AppModule) AutoCLIOptions() *autocliv1.ModuleOptions {
	return &autocliv1.ModuleOptions{
		Query: &autocliv1.ServiceCommandDescriptor{
			Service: "inferenced.inference.v1.Query",
			RpcCommandOptions: []*autocliv1.RpcCommandOptions{
				{RpcMethod: "Params", Use: "params", Short: "Show the module parameters"},
				{
					RpcMethod: "Participant", Use: "participant [address]", Short: "Show one participant",
					PositionalArgs: []*autocliv1.PositionalArgDescriptor{{ProtoField: "address"}},
				},
				{RpcMethod: "Participants", Use: "participants", Short: "List participants (paginated)"},
				{RpcMethod: "CurrentEpoch", Use: "current-epoch", Short: "Show the current epoch and its phase"},
				{RpcMethod: "EpochGroup", Use: "epoch-group", Short: "Show the current epoch group in vote-extension order"},
				{
					RpcMethod: "Inference", Use: "inference [transfer-agent] [inference-id]",
					Short:          "Show one inference, named by the transfer agent that started it and its id (ids are unique per agent)",
					PositionalArgs: []*autocliv1.PositionalArgDescriptor{{ProtoField: "transfer_agent"}, {ProtoField: "inference_id"}},
				},
				{
					RpcMethod: "GetRandomExecutor", Use: "random-executor [model] [seed]",
					Short:          "Draw an executor for a model (same state and seed, same answer)",
					PositionalArgs: []*autocliv1.PositionalArgDescriptor{{ProtoField: "model"}, {ProtoField: "seed"}},
				},
				{
					RpcMethod: "ExecutorHealth", Use: "executor-health [address]",
					Short:          "Show an executor's circuit-breaker state, windows, cooldown and eligible-at height",
					PositionalArgs: []*autocliv1.PositionalArgDescriptor{{ProtoField: "address"}},
				},
				{RpcMethod: "ExcludedExecutors", Use: "excluded-executors", Short: "List executors the circuit breaker holds EXCLUDED or PROBE (paginated)"},
				{
					RpcMethod: "TransferAgent", Use: "transfer-agent [address]",
					Short:          "Show a transfer agent: bond, standing this epoch, miss allowance and whether it may start",
					PositionalArgs: []*autocliv1.PositionalArgDescriptor{{ProtoField: "address"}},
				},
				{RpcMethod: "TransferAgents", Use: "transfer-agents", Short: "List the registered transfer agents with their standing (paginated)"},
			},
		},
		Tx: &autocliv1.ServiceCommandDescriptor{
			Service: "inferenced.inference.v1.Msg",
			RpcCommandOptions: []*autocliv1.RpcCommandOptions{
				{RpcMethod: "UpdateParams", Skip: true}, // governance only: submit it in a proposal
				{
					RpcMethod: "RegisterParticipant", Use: "register-participant [inference-url] [model]...",
					Short: "Register the signer as an executor of the models, locking --bond (at least participant_min_bond, " +
						"and weight x participant_bond_per_weight for --weight; e.g. --weight 100 --bond 1000000stake)",
					PositionalArgs: []*autocliv1.PositionalArgDescriptor{{ProtoField: "inference_url"}, {ProtoField: "models", Varargs: true}},
				},
				{
					RpcMethod: "UpdateParticipant", Use: "update-participant [inference-url] [model]...",
					Short:          "Change the signer's registration (--add-bond raises the bond, so --weight can grow); the epoch group sees it next epoch",
					PositionalArgs: []*autocliv1.PositionalArgDescriptor{{ProtoField: "inference_url"}, {ProtoField: "models", Varargs: true}},
				},
				{
					RpcMethod: "StartInference", Use: "start-inference [inference-id] [model] [executor]",
					Short:          "Start an inference on an executor, as its transfer agent",
					PositionalArgs: []*autocliv1.PositionalArgDescriptor{{ProtoField: "inference_id"}, {ProtoField: "model"}, {ProtoField: "executor"}},
				},
				{
					RpcMethod: "FinishInference", Use: "finish-inference [transfer-agent] [inference-id]",
					Short:          "Finish an inference, as its executor; the transfer agent that started it and its id name it",
					PositionalArgs: []*autocliv1.PositionalArgDescriptor{{ProtoField: "transfer_agent"}, {ProtoField: "inference_id"}},
				},
				{
					RpcMethod: "RegisterTransferAgent", Use: "register-transfer-agent [bond]",
					Short:          "Register the signer as a transfer agent, locking the bond (e.g. 1000000stake, at least transfer_agent_min_bond)",
					PositionalArgs: []*autocliv1.PositionalArgDescriptor{{ProtoField: "bond"}},
				},
				{
					RpcMethod: "DeregisterParticipant", Use: "deregister-participant",
					Short: "Leave as an executor: serve out this epoch; at the next boundary the signer leaves the group and its bond is returned",
				},
				{
					RpcMethod: "LeaveTransferAgent", Use: "leave-transfer-agent",
					Short: "Stop the signer's starts now; its bond is returned when the next epoch starts",
				},
			},
		},
	}
}

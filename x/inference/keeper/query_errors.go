package keeper

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// queryError is a query's error: a gRPC status whose text is its message
// alone. The SDK puts a query's error text into the ABCI answer's log
// (baseapp wraps err.Error()), and the client turns that log back into a
// status; the text of a plain status.Error already reads "rpc error: code
// = NotFound desc = ...", so the client printed that prefix twice. The
// code still reaches gRPC clients (GRPCStatus) and the SDK's mapping to
// ABCI codes (NotFound: key not found).
type queryError struct{ st *status.Status }

func (e *queryError) Error() string              { return e.st.Message() }
func (e *queryError) GRPCStatus() *status.Status { return e.st }

// queryErr is a query error of code c saying msg.
func queryErr(c codes.Code, msg string) error { return &queryError{status.New(c, msg)} }

// queryErrf is queryErr with a format.
func queryErrf(c codes.Code, format string, args ...any) error {
	return &queryError{status.Newf(c, format, args...)}
}

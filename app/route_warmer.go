package app

import (
	"fmt"

	"cosmossdk.io/log"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// routeWarmer builds the query path's route tables after each commit, off
// the consensus path, so that the first GetRandomExecutor of a block finds
// its table ready instead of building it (keeper.WarmRouteTables; 16-20 ms
// at 10,000 members). One goroutine, woken by each commit; commits that come
// while it works are coalesced into one wake-up. It reads committed state
// through a query context, as any client query does, and never writes.
type routeWarmer struct {
	warm   func() error
	logger log.Logger
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

func newRouteWarmer(warm func() error, logger log.Logger) *routeWarmer {
	w := &routeWarmer{warm: warm, logger: logger, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// committed is the PrepareCheckStater: it only wakes the goroutine.
func (w *routeWarmer) committed(sdk.Context) {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *routeWarmer) run() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
		}
		if err := w.once(); err != nil {
			w.logger.Debug("route tables not warmed", "err", err)
		}
	}
}

// once warms the tables of the latest commit; a panic is an error here, so
// a fault in a query-path build never takes the node down.
func (w *routeWarmer) once() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return w.warm()
}

// Stop ends the goroutine and waits for it.
func (w *routeWarmer) Stop() {
	close(w.stop)
	<-w.done
}

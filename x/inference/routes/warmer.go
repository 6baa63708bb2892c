package routes

import (
	"fmt"

	"cosmossdk.io/log/v2"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// Warmer builds the query path's route tables after each commit, off the
// consensus path, so that the first GetRandomExecutor of a block finds its
// table ready instead of building it (Routes.Warm; 16-20 ms at 10,000
// members). One goroutine, woken by each commit; commits that come
// while it works are coalesced into one wake-up. It reads committed state
// through a query context, as any client query does, and never writes.
type Warmer struct {
	warm   func() error
	logger log.Logger
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

// NewWarmer starts the goroutine that runs warm after each commit.
func NewWarmer(warm func() error, logger log.Logger) *Warmer {
	w := &Warmer{warm: warm, logger: logger, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// Committed is the app's PrepareCheckStater: it only wakes the goroutine.
func (w *Warmer) Committed(sdk.Context) {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *Warmer) run() {
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
func (w *Warmer) once() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return w.warm()
}

// Stop ends the goroutine and waits for it.
func (w *Warmer) Stop() {
	close(w.stop)
	<-w.done
}

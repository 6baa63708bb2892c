package main

import (
	"net"
	"net/http"
	"time"
)

// gate applies the dark modes to /health and /v1/inference. It reports true
// when the request may be served normally; otherwise the request has already
// been dealt with (connection closed, context ended, or shutdown answered).
//
// In hang mode the request waits until the executor comes back (it is then
// served normally), switches to refuse (connection closed), the client gives
// up (request context ends), the server shuts down (503), or MaxHang passes
// (connection closed).
func (s *Server) gate(w http.ResponseWriter, r *http.Request) bool {
	var bound *time.Timer
	for {
		mode, changed := s.st.Mode()
		switch mode {
		case ModeUp:
			return true
		case ModeRefuse:
			s.refuse(w)
			return false
		}
		if bound == nil {
			s.st.requestsHung.Add(1)
			bound = time.NewTimer(s.cfg.MaxHang)
			defer bound.Stop()
		}
		select {
		case <-changed:
			// re-evaluate the new mode
		case <-r.Context().Done():
			return false
		case <-s.st.Stopped():
			shuttingDown(w)
			return false
		case <-bound.C:
			abortConn(w)
			return false
		}
	}
}

// refuse counts a refused request and drops its connection.
func (s *Server) refuse(w http.ResponseWriter) {
	s.st.requestsRefused.Add(1)
	abortConn(w)
}

// abortConn closes the client connection without writing any response, so
// the client sees a connection error rather than an HTTP status. For TCP it
// sets SO_LINGER 0 so the close is a reset, like a crashed process.
func abortConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not hijackable (e.g. HTTP/2): abort the stream instead.
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

package backendtest

import (
	"io"
	"net"
	"sync"
)

// sink is a TCP listener on 127.0.0.1 that counts the connections made to
// it and reads them to the end: the address a log driver is told to dial.
type sink struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	n     int
}

func newSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{ln: ln}
	go s.accept()
	return s, nil
}

func (s *sink) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		s.n++
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		go func() { _, _ = io.Copy(io.Discard, c) }()
	}
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *sink) close() {
	_ = s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

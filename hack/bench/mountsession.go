package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/cornus-dev/cornus/caretaker/mount/export"
	mountfuse "github.com/cornus-dev/cornus/caretaker/mount/fuse"
	"github.com/cornus-dev/cornus/server/muxconn"
)

// sessionMount serves tree over a yamux stream of an upgraded connection
// on loopback (muxconn's, as cornus serve's sessions: bare between cornus
// ends), configured as cornus serve's sessions are (16 MiB stream window,
// keepalives), and mounts it: the whole path a client-local mount takes,
// minus the token check.
func sessionMount(tree, mnt string) (func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The client side: it accepts the server's stream and exports.
		c, err := muxconn.Accept(ctx, w, r)
		if err != nil {
			served <- err
			return
		}
		mux, err := yamux.Client(c, benchMuxConfig())
		if err != nil {
			served <- err
			return
		}
		defer mux.Close()
		st, err := mux.AcceptStream()
		if err != nil {
			served <- err
			return
		}
		served <- export.Serve(ctx, st, tree, export.Options{})
	})}
	go func() { _ = hs.Serve(l) }()
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	conn, resp, err := muxconn.Dial(dctx, http.DefaultClient, "http://"+l.Addr().String()+"/", nil)
	dcancel()
	if err == nil && conn == nil {
		err = fmt.Errorf("upgrade refused: %s", resp.Status)
	}
	if err != nil {
		cancel()
		hs.Close()
		return nil, err
	}
	mux, err := yamux.Server(conn, benchMuxConfig())
	if err != nil {
		cancel()
		hs.Close()
		return nil, err
	}
	st, err := mux.OpenStream()
	if err != nil {
		cancel()
		hs.Close()
		return nil, err
	}
	m, err := mountfuse.Mount(ctx, st, mnt, mountfuse.Options{})
	if err != nil {
		cancel()
		hs.Close()
		return nil, err
	}
	return func() {
		if err := m.Unmount(); err != nil {
			fail(fmt.Errorf("cornus unmount: %w", err))
		}
		mux.Close()
		cancel()
		<-served //nolint:errcheck // the export's end after the cancel: its error is moot
		hs.Close()
	}, nil
}

// benchMuxConfig is cornus serve's session configuration (server/sessions.go).
func benchMuxConfig() *yamux.Config {
	conf := yamux.DefaultConfig()
	conf.KeepAliveInterval, conf.ConnectionWriteTimeout = 2*time.Second, 10*time.Second
	conf.MaxStreamWindowSize = 4 << 20
	conf.LogOutput = nil
	conf.Logger = discardYamux{}
	return conf
}

type discardYamux struct{}

func (discardYamux) Print(...any)          {}
func (discardYamux) Printf(string, ...any) {}
func (discardYamux) Println(...any)        {}

package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
)

// Server serves the sandbox service on a listener of the caller's choosing,
// without go-plugin: no handshake, no launch TLS, no parent to die with.
// It is for a listener that is private already — promptkit-sandbox serve's
// unix socket, in a directory only its user can enter, whose peers it
// checks — and speaks exactly what a plugin speaks, so a Client of it
// (NewClient) gets the same streaming, typed errors, output caps and
// cancellation as a plugin's host does.
type Server struct {
	grpc *grpc.Server
	srv  *server
}

// NewServer builds a Server for the modes of opts, which are checked as
// Serve checks a plugin's. A nil opts.Logger discards the logs.
func NewServer(opts ServeOpts) (*Server, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("plugin server %q: %w", opts.Name, err)
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	srv := newServer(opts, log)
	g := grpc.NewServer(serverOptions()...)
	sandboxpb.RegisterSandboxServer(g, srv)
	sandboxpb.RegisterProviderServer(g, &providerServer{srv: srv})
	return &Server{grpc: g, srv: srv}, nil
}

// Serve accepts connections on lis until Stop, and then returns nil; an
// error is the listener's.
func (s *Server) Serve(lis net.Listener) error {
	if err := s.grpc.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve on %s: %w", lis.Addr(), err)
	}
	return nil
}

// Stop closes the listeners and every connection, which ends each call in
// flight as a host's cancel would (its backend kills what it started);
// then, within grace in all, it waits for the backends' calls to return
// and closes the sandboxes opened through the Server, as a stopping
// plugin does.
func (s *Server) Stop(grace time.Duration) {
	s.grpc.Stop()
	s.srv.shutdown(grace)
}

// NewClient is a Client of a Server (or a plugin) reached over conn, a
// connection the caller dialed with DialOptions. Nothing tells it that
// the other side's process has exited: a call fails when the connection
// does (KindTransport, "connection lost").
func NewClient(conn grpc.ClientConnInterface) *Client {
	return newClient(context.Background(), conn)
}

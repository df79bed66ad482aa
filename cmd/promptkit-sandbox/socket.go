package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// dialTimeout bounds connecting to a serve: a live one accepts at once.
const dialTimeout = 5 * time.Second

// dialServe connects to the serve at path and checks it runs as our user:
// whoever owns the other end receives the call's stdin and answers for the
// command. Nothing listening is execrelay.ErrNoServe.
func dialServe(ctx context.Context, path string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w on %s", execrelay.ErrNoServe, path)
		}
		return nil, fmt.Errorf("connect to serve on %s: %w", path, err)
	}
	if err := checkPeer(c); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("serve on %s: %w", path, err)
	}
	return c, nil
}

// checkPeer refuses a connection whose other end runs as another user.
func checkPeer(c net.Conn) error {
	uid, err := peerUID(c)
	if err != nil {
		return err
	}
	if want := os.Getuid(); uid != want {
		return &execrelay.PeerError{UID: uid, Want: want}
	}
	return nil
}

// peerUID is the user of the process at the other end of a unix socket
// connection, as the kernel recorded it at connect (SO_PEERCRED).
func peerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("peer credentials: %T is not a unix socket connection", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	uid, uidErr := 0, error(nil)
	if err := raw.Control(func(fd uintptr) { uid, uidErr = execrelay.PeerUID(int(fd)) }); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if uidErr != nil {
		return 0, fmt.Errorf("peer credentials: %w", uidErr)
	}
	return uid, nil
}

// grpcOver is a gRPC connection whose first transport is conn, already
// dialed and checked; should gRPC need another (it reconnects after a
// failure), that one is dialed and checked the same way.
func grpcOver(conn net.Conn, path string) (*grpc.ClientConn, error) {
	var once sync.Once
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		var first net.Conn
		once.Do(func() { first = conn })
		if first != nil {
			return first, nil
		}
		return dialServe(ctx, path)
	}
	opts := append(plugin.DialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dial),
	)
	return grpc.NewClient("passthrough:///promptkit-sandbox-serve", opts...)
}

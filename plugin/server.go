package plugin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// OutputLimiter is implemented by a sandbox whose cap on each of stdout
// and stderr is not sandbox.DefaultOutputLimit. Open reports the cap to
// the host, which accepts no more than that of either stream; a sandbox
// that raises its cap without implementing OutputLimiter has its output
// truncated on the host at the default.
type OutputLimiter interface {
	OutputLimit() int
}

// server is the plugin side of the service: the open sandboxes by handle.
type server struct {
	sandboxpb.UnimplementedSandboxServer

	name, version string
	modes         map[string]sandbox.Factory
	keys          map[string][]string
	descriptions  map[string]string
	providers     *providers
	log           hclog.Logger
	tracer        trace.Tracer
	noCalls       bool       // ServeOpts.SpawnStreamsOnly
	socket        *frameConn // the calls socket the host passed; nil: none

	mu       sync.Mutex
	open     map[string]sandbox.Sandbox
	calls    map[string]func() // cancels of the calls in flight, by ID (see Cancel)
	active   int               // backend Spawn calls running
	stopping bool              // shutdown has begun: no new calls
	idle     chan struct{}     // closed when active drops to zero while stopping
}

func newServer(opts ServeOpts, log hclog.Logger) *server {
	tp := opts.TracerProvider
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return &server{
		tracer:       tp.Tracer("github.com/altairalabs/promptkit-sandbox/plugin"),
		noCalls:      opts.SpawnStreamsOnly,
		name:         opts.Name,
		version:      opts.Version,
		modes:        opts.Modes,
		keys:         opts.ConfigKeys,
		descriptions: opts.Descriptions,
		providers:    &providers{modes: opts.Providers, owner: make(map[string]Provider)},
		log:          log,
		open:         make(map[string]sandbox.Sandbox),
		calls:        make(map[string]func()),
	}
}

func (s *server) Describe(context.Context, *sandboxpb.DescribeRequest) (*sandboxpb.DescribeResponse, error) {
	resp := &sandboxpb.DescribeResponse{Name: s.name, Version: s.version, ProtocolVersion: ProtocolVersion, Calls: !s.noCalls, CallsSocket: s.socket != nil}
	for _, m := range s.modeNames() {
		_, provider := s.providers.modes[m]
		resp.Modes = append(resp.Modes, &sandboxpb.Mode{Name: m, ConfigKeys: s.keys[m], Description: s.descriptions[m], Provider: provider})
	}
	return resp, nil
}

// Open builds the sandbox with the mode's factory. The factory's error
// goes back verbatim as InvalidArgument: it is the user's configuration
// that is wrong, and the host adds where it was written. ctx carries the
// host's open_timeout: the factory stops when it ends, and a sandbox it
// built all the same is closed, since the host no longer waits for its
// handle and nothing else would ever close it.
func (s *server) Open(ctx context.Context, req *sandboxpb.OpenRequest) (*sandboxpb.OpenResponse, error) {
	factory, ok := s.modes[req.GetMode()]
	if pr, isProvider := s.providers.modes[req.GetMode()]; isProvider {
		factory, ok = checkFactory(req.GetMode(), pr), true
	}
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "plugin %s does not serve mode %q (it serves %s)",
			s.name, req.GetMode(), strings.Join(s.modeNames(), ", "))
	}
	var cfg map[string]any
	if raw := req.GetConfigJson(); len(raw) > 0 {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "config: not a JSON object: %v", err)
		}
	}
	sb, err := callFactory(ctx, factory, req.GetSandboxName(), cfg)
	if err != nil {
		return nil, openStatus(err)
	}
	if sb == nil {
		return nil, status.Errorf(codes.Internal, "plugin %s: mode %q: factory returned no sandbox and no error", s.name, req.GetMode())
	}
	if ctx.Err() != nil {
		_ = closeSandbox(sb)
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	limit := sandbox.DefaultOutputLimit
	if ol, ok := sb.(OutputLimiter); ok && ol.OutputLimit() > 0 {
		limit = ol.OutputLimit()
	}
	handle, err := newHandle()
	if err != nil {
		_ = closeSandbox(sb)
		return nil, status.Errorf(codes.Internal, "new handle: %v", err)
	}
	s.mu.Lock()
	s.open[handle] = sb
	s.mu.Unlock()
	s.log.Debug("sandbox opened", "sandbox", req.GetSandboxName(), "mode", req.GetMode(), "handle", handle, "output_limit", strconv.Itoa(limit))
	return &sandboxpb.OpenResponse{Handle: handle, OutputLimit: int64(limit), Env: forwardedEnv(sb)}, nil
}

// forwardedEnv is what sb says it sets in every process it runs, bare
// keys resolved here: their values are this process's, which the host
// may not share (a plugin it reattached to).
func forwardedEnv(sb sandbox.Sandbox) []string {
	ef, ok := sb.(sandbox.EnvForwarder)
	if !ok {
		return nil
	}
	return shell.MergeEnv(nil, ef.ForwardedEnv(), os.LookupEnv)
}

// openStatus is the status of a factory's error. A configuration the
// factory rejects is InvalidArgument with its words; an error of a kind
// (the engine is unreachable, the image is missing) is FailedPrecondition
// carrying the kind, so the host can tell a sandbox that could not open
// from a configuration that is wrong.
func openStatus(err error) error {
	st := status.New(codes.InvalidArgument, err.Error())
	if sandbox.KindOf(err) == sandbox.KindUnknown {
		return st.Err()
	}
	st = status.New(codes.FailedPrecondition, err.Error())
	if typed, derr := st.WithDetails(resultOf(sandbox.Response{}, err)); derr == nil {
		return typed.Err()
	}
	return st.Err()
}

// modeNames are the sandbox and provider modes served, sorted.
func (s *server) modeNames() []string {
	names := slices.Collect(maps.Keys(s.modes))
	names = append(names, slices.Collect(maps.Keys(s.providers.modes))...)
	slices.Sort(names)
	return names
}

// checkFactory opens a provider mode's sandbox as a check of its
// configuration (see checkOnly).
func checkFactory(mode string, pr Provider) sandbox.Factory {
	return func(_ context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
		if err := pr.Check(name, cfg); err != nil {
			return nil, err
		}
		return checkOnly{name: name, mode: mode}, nil
	}
}

// callFactory runs a factory; a panic in it is the factory's bug, and
// must not take down every other sandbox the process serves.
func callFactory(ctx context.Context, f sandbox.Factory, name string, cfg map[string]any) (sb sandbox.Sandbox, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sandbox %s: factory panicked: %v", name, r)
		}
	}()
	return f(ctx, name, cfg)
}

func newHandle() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func (s *server) lookup(handle string) (sandbox.Sandbox, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.open[handle]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "unknown sandbox handle %q: closed, or opened in an earlier plugin process", handle)
	}
	return sb, nil
}

func (s *server) Close(_ context.Context, req *sandboxpb.CloseRequest) (*sandboxpb.CloseResponse, error) {
	s.mu.Lock()
	sb, ok := s.open[req.GetHandle()]
	delete(s.open, req.GetHandle())
	s.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "unknown sandbox handle %q: closed, or opened in an earlier plugin process", req.GetHandle())
	}
	if err := closeSandbox(sb); err != nil {
		return nil, status.Error(codes.Unknown, err.Error())
	}
	s.log.Debug("sandbox closed", "sandbox", sb.Name(), "handle", req.GetHandle())
	return &sandboxpb.CloseResponse{}, nil
}

// closeSandbox closes sb; a panic in its Close is its bug, and must not
// take down every other sandbox the process serves.
func closeSandbox(sb sandbox.Sandbox) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sandbox %s: Close panicked: %v", sb.Name(), r)
		}
	}()
	return sandbox.Close(sb)
}

// shutdown runs once the gRPC server has stopped, which cancelled every
// call in flight. Within grace in all, it waits for the backends' Spawn
// calls to return (a backend removes what it started when its context
// ends, a container say) and then closes every sandbox still open (a
// backend with a pool drains it). A backend that hangs cannot keep the
// process alive past grace.
func (s *server) shutdown(grace time.Duration) {
	deadline := time.Now().Add(grace)
	if s.socket != nil {
		// Its calls end as a stopped gRPC server's streams do.
		s.socket.close()
	}
	s.mu.Lock()
	s.stopping = true
	var idle chan struct{}
	if s.active > 0 {
		idle = make(chan struct{})
		s.idle = idle
	}
	s.mu.Unlock()
	if idle != nil {
		timer := time.NewTimer(grace)
		select {
		case <-idle:
		case <-timer.C:
			s.log.Warn("calls still running at shutdown; exiting anyway", "grace", grace)
		}
		timer.Stop()
	}
	s.closeAll(max(time.Until(deadline), 0))
	s.closeProviders(max(time.Until(deadline), 0))
}

// closeProviders releases every provisioned sandbox, waiting at most
// grace: a container a provider started must not outlive the process.
func (s *server) closeProviders(grace time.Duration) {
	done := make(chan []error, 1)
	go func() { done <- s.providers.close() }()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case errs := <-done:
		for _, err := range errs {
			s.log.Warn("releasing provisioned sandboxes at shutdown", "error", err)
		}
	case <-timer.C:
		s.log.Warn("provisioned sandboxes still releasing at shutdown; exiting anyway", "grace", grace)
	}
}

// enter registers a backend call; it fails once shutdown has begun.
func (s *server) enter() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return status.Error(codes.Unavailable, "plugin is shutting down")
	}
	s.active++
	return nil
}

func (s *server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.active == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// closeAll closes every sandbox still open, concurrently, waiting at most
// grace.
func (s *server) closeAll(grace time.Duration) {
	s.mu.Lock()
	open := s.open
	s.open = make(map[string]sandbox.Sandbox)
	s.mu.Unlock()
	if len(open) == 0 {
		return
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for handle, sb := range open {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := closeSandbox(sb); err != nil {
				s.log.Warn("closing sandbox at shutdown", "sandbox", sb.Name(), "handle", handle, "error", err)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-done:
		s.log.Debug("closed open sandboxes at shutdown", "count", len(open))
	case <-timer.C:
		s.log.Warn("sandboxes still closing at shutdown; exiting anyway", "grace", grace)
	}
}

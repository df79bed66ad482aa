package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing/grpctrace"
)

// providerServer is the plugin side of the Provider service.
type providerServer struct {
	sandboxpb.UnimplementedProviderServer
	srv *server
}

// providers holds a plugin's provider modes and which provisioned id
// belongs to which, so Release goes to the provider that made it.
type providers struct {
	modes map[string]Provider

	mu    sync.Mutex
	owner map[string]Provider // by provisioned id
}

func (p *providers) names() []string { return slices.Sorted(maps.Keys(p.modes)) }

// distinct are the providers, each once: one value may serve several modes.
func (p *providers) distinct() []Provider {
	var out []Provider
	for _, name := range p.names() {
		if pr := p.modes[name]; !slices.Contains(out, pr) {
			out = append(out, pr)
		}
	}
	return out
}

func (ps *providerServer) Provision(ctx context.Context, req *sandboxpb.ProvisionRequest) (*sandboxpb.ProvisionResponse, error) {
	s := ps.srv
	pr, ok := s.providers.modes[req.GetMode()]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "plugin %s does not provide mode %q (provider modes: %s)",
			s.name, req.GetMode(), orNone(s.providers.names()))
	}
	var cfg map[string]any
	if raw := req.GetConfigJson(); len(raw) > 0 {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "config: not a JSON object: %v", err)
		}
	}
	if req.GetWorkspaceVolume() != "" {
		if _, ok := pr.(VolumeKeeper); !ok {
			return nil, status.Errorf(codes.FailedPrecondition, "plugin %s: mode %s: workspace volume %q: %v", s.name, req.GetMode(), req.GetWorkspaceVolume(), ErrNoWorkspaceVolumes)
		}
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	timeout := time.Duration(req.GetTimeoutNanos())
	if timeout <= 0 {
		timeout = DefaultProvisionTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Its span is a child of the host's (the trace context came in the
	// call's metadata); the provider's own spans are children of this.
	ctx, span := s.tracer.Start(grpctrace.Extract(ctx), "plugin.provision",
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("promptkit.plugin.name", s.name),
			attribute.String("promptkit.sandbox.mode", req.GetMode()),
			attribute.String("promptkit.sandbox.name", req.GetName())))
	got, err := callProvision(ctx, pr, ProvisionSpec{Name: req.GetName(), Mode: req.GetMode(), Config: cfg, Workspace: req.GetWorkspace(), WorkspaceVolume: req.GetWorkspaceVolume()})
	tracing.End(span, err)
	if errors.Is(err, ErrNoWorkspaceVolumes) {
		// From a provider further on (serve's, through its host): kept
		// typed across this hop too.
		return nil, status.Errorf(codes.FailedPrecondition, "%v", err)
	}
	if err != nil {
		return nil, openStatus(err)
	}
	s.providers.mu.Lock()
	s.providers.owner[got.ID] = pr
	s.providers.mu.Unlock()
	s.log.Info("provisioned", "sandbox", got.Name, "mode", got.Mode, "id", got.ID, "endpoint", got.Endpoint)
	return &sandboxpb.ProvisionResponse{Sandbox: toProto(got, true)}, nil
}

// callProvision runs a provider's Provision; a panic in it is its bug
// and must not end the process serving every other sandbox.
func callProvision(ctx context.Context, pr Provider, spec ProvisionSpec) (got Provisioned, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = sandbox.Errorf(sandbox.KindStart, "provision %s: provider panicked: %v", spec.Name, r)
		}
	}()
	return pr.Provision(ctx, spec)
}

// ownerOf is the provider that provisioned id; NotFound if none did.
func (ps *providerServer) ownerOf(id string) (Provider, error) {
	s := ps.srv
	s.providers.mu.Lock()
	pr, ok := s.providers.owner[id]
	s.providers.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "plugin %s: %v: %q", s.name, ErrNotProvisioned, id)
	}
	return pr, nil
}

func (ps *providerServer) Release(ctx context.Context, req *sandboxpb.ReleaseRequest) (*sandboxpb.ReleaseResponse, error) {
	s := ps.srv
	pr, err := ps.ownerOf(req.GetId())
	if err != nil {
		return nil, err
	}
	err = pr.Release(ctx, req.GetId(), ReleaseOptions{Purge: req.GetPurge()})
	if err != nil && !errors.Is(err, ErrNotProvisioned) {
		return nil, releaseStatus(err)
	}
	s.providers.mu.Lock()
	delete(s.providers.owner, req.GetId())
	s.providers.mu.Unlock()
	if err != nil {
		return nil, status.Errorf(codes.NotFound, "plugin %s: %v", s.name, err)
	}
	s.log.Info("released", "id", req.GetId())
	return &sandboxpb.ReleaseResponse{}, nil
}

// releaseStatus keeps a failed release's kind, as openStatus does.
func releaseStatus(err error) error {
	if sandbox.KindOf(err) == sandbox.KindUnknown {
		return status.Error(codes.Unknown, err.Error())
	}
	return openStatus(err)
}

func (ps *providerServer) List(ctx context.Context, req *sandboxpb.ListRequest) (*sandboxpb.ListResponse, error) {
	resp := &sandboxpb.ListResponse{}
	var errs []error
	answered := false // some provider listed something without an error
	// Several providers may see the same volumes (serve's providers,
	// one per entry, all ask one host): each is listed once.
	seen := map[string]bool{}
	for _, pr := range ps.srv.providers.distinct() {
		// What a provider lists comes with its error too: what it
		// could list (one cluster of two, say).
		list, err := pr.List(ctx, ListOptions{Usage: req.GetUsage()})
		if err != nil {
			errs = append(errs, err)
		} else {
			answered = true
		}
		for _, p := range list {
			resp.Sandboxes = append(resp.Sandboxes, toProto(p, false))
		}
		vk, ok := pr.(VolumeKeeper)
		if !ok {
			continue
		}
		vols, err := vk.Volumes(ctx)
		if err != nil {
			errs = append(errs, err)
		}
		for _, v := range vols {
			if key := v.Mode + "\x00" + v.Name; !seen[key] {
				seen[key] = true
				resp.Volumes = append(resp.Volumes, volumeToProto(v))
			}
		}
	}
	if len(errs) > 0 && !answered && len(resp.Sandboxes) == 0 && len(resp.Volumes) == 0 {
		// Nothing could be listed: the error, as a host that predates
		// warnings expects it.
		return nil, releaseStatus(errors.Join(errs...))
	}
	for _, err := range errs {
		resp.Warnings = append(resp.Warnings, listWarnings(err)...)
	}
	return resp, nil
}

// closeProviders releases what every provider holds, at shutdown.
func (p *providers) close() []error {
	var errs []error
	for _, pr := range p.distinct() {
		if c, ok := pr.(interface{ Close() error }); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

func toProto(p Provisioned, withToken bool) *sandboxpb.Provisioned {
	out := &sandboxpb.Provisioned{
		Id: p.ID, Name: p.Name, Mode: p.Mode, Endpoint: p.Endpoint, Workspace: p.Workspace,
		CreatedUnixNanos: p.Created.UnixNano(), Details: p.Details, WorkspaceVolume: p.WorkspaceVolume,
	}
	if withToken {
		out.Token = p.Token
	}
	return out
}

func fromProto(p *sandboxpb.Provisioned) Provisioned {
	out := Provisioned{
		ID: p.GetId(), Name: p.GetName(), Mode: p.GetMode(), Endpoint: p.GetEndpoint(), Token: p.GetToken(),
		Workspace: p.GetWorkspace(), Details: p.GetDetails(), WorkspaceVolume: p.GetWorkspaceVolume(),
	}
	if n := p.GetCreatedUnixNanos(); n != 0 {
		out.Created = time.Unix(0, n)
	}
	return out
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// checkOnly is what Open returns for a provider mode: the host opens
// every sandbox of a config it loads, and a provider's is checked, not
// provisioned. It runs no command.
type checkOnly struct{ name, mode string }

func (c checkOnly) Name() string { return c.name }

func (c checkOnly) Spawn(_ context.Context, req sandbox.Request) (sandbox.Response, error) {
	err := sandbox.NewError(sandbox.KindStart, fmt.Sprintf("command %q: sandbox %s is a provider (mode %s): it hands out MCP endpoints and runs no command; use promptkit-sandbox codegen up --sandbox %s",
		req.Command, c.name, c.mode, c.name), nil)
	return sandbox.Response{Err: err}, err
}

package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// fakeProvider hands out made-up endpoints and records what it holds.
type fakeProvider struct {
	mu     sync.Mutex
	held   map[string]Provisioned
	n      int
	closed bool
	purged []string // ids released with Purge
}

func (f *fakeProvider) Check(_ string, cfg map[string]any) error {
	if cfg["image"] == nil {
		return errors.New(`config: key "image" is required`)
	}
	return nil
}

func (f *fakeProvider) Provision(_ context.Context, spec ProvisionSpec) (Provisioned, error) {
	if err := f.Check(spec.Name, spec.Config); err != nil {
		return Provisioned{}, err
	}
	if spec.Config["image"] == "missing" {
		return Provisioned{}, sandbox.NewError(sandbox.KindStart, "image missing is not present locally", nil)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	p := Provisioned{ID: fmt.Sprintf("id%d", f.n), Name: spec.Name, Mode: spec.Mode, Endpoint: "http://127.0.0.1:1/mcp",
		Token: "secret", Workspace: spec.Workspace, Created: time.Now(), Details: map[string]string{"k": "v"}}
	f.held[p.ID] = p
	return p, nil
}

func (f *fakeProvider) Release(_ context.Context, id string, opts ReleaseOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.held[id]; !ok {
		return ErrNotProvisioned
	}
	delete(f.held, id)
	if opts.Purge {
		f.purged = append(f.purged, id)
	}
	return nil
}

func (f *fakeProvider) List(context.Context, ListOptions) ([]Provisioned, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Provisioned
	for _, p := range f.held {
		out = append(out, p)
	}
	return out, nil
}

func (f *fakeProvider) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.held = map[string]Provisioned{}
	return nil
}

// localClient serves opts with NewServer on a unix socket and returns a
// Client of it; stop stops the server.
func localClient(t *testing.T, opts ServeOpts) (client *Client, stop func()) {
	t.Helper()
	lis, sock := unixListener(t)
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	var once sync.Once
	stop = func() { once.Do(func() { srv.Stop(time.Second) }) }
	t.Cleanup(stop)
	conn, err := grpc.NewClient("unix://"+sock, append(DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return NewClient(conn), stop
}

// TestProviderService: Describe marks the provider mode; Provision returns
// the endpoint and token; List leaves tokens out; Release forgets the id;
// errors keep their kinds; Open of a provider mode checks the config and
// gives a sandbox that refuses to run anything; Stop closes the provider.
func TestProviderService(t *testing.T) {
	fp := &fakeProvider{held: map[string]Provisioned{}}
	client, stop := localClient(t, ServeOpts{
		Name: "prov", Version: "1.0.0",
		Modes:     map[string]sandbox.Factory{"direct": direct.Factory},
		Providers: map[string]Provider{"fake_codegen": fp},
	})
	ctx := context.Background()
	d, err := client.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Modes) != 2 || d.Modes[0].Name != "direct" || d.Modes[0].Provider || d.Modes[1].Name != "fake_codegen" || !d.Modes[1].Provider {
		t.Fatalf("modes %+v", d.Modes)
	}

	p, err := client.Provision(ctx, ProvisionSpec{Name: "code", Mode: "fake_codegen", Config: map[string]any{"image": "x"}, Workspace: "/w"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID == "" || p.Token != "secret" || p.Workspace != "/w" || p.Details["k"] != "v" || p.Created.IsZero() {
		t.Errorf("provisioned %+v", p)
	}
	l, err := client.List(ctx, ListOptions{})
	list := l.Sandboxes
	if err != nil || len(list) != 1 || list[0].ID != p.ID || list[0].Token != "" {
		t.Errorf("List: %+v, %v (want one, without its token)", list, err)
	}

	_, err = client.Provision(ctx, ProvisionSpec{Name: "code", Mode: "fake_codegen", Config: map[string]any{}}, 0)
	if err == nil || sandbox.KindOf(err) != sandbox.KindUnknown || !strings.Contains(err.Error(), `"image" is required`) {
		t.Errorf("bad config: %v (kind %v)", err, sandbox.KindOf(err))
	}
	_, err = client.Provision(ctx, ProvisionSpec{Name: "code", Mode: "fake_codegen", Config: map[string]any{"image": "missing"}}, 0)
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "not present locally") {
		t.Errorf("missing image: %v", err)
	}
	_, err = client.Provision(ctx, ProvisionSpec{Name: "code", Mode: "direct"}, 0)
	if err == nil || !strings.Contains(err.Error(), "does not provide mode") {
		t.Errorf("sandbox mode provisioned: %v", err)
	}

	sb, err := client.Open(ctx, "code", "fake_codegen", map[string]any{"image": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Spawn(ctx, sandbox.Request{Command: "true"}); !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "codegen up") {
		t.Errorf("Spawn in a provider sandbox: %v", err)
	}
	if _, err := client.Open(ctx, "code", "fake_codegen", nil); err == nil {
		t.Error("Open of a provider mode did not check its config")
	}

	if err := client.Release(ctx, p.ID, ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.Release(ctx, p.ID, ReleaseOptions{}); !errors.Is(err, ErrNotProvisioned) {
		t.Errorf("second release: %v", err)
	}
	// Purge crosses the wire: the provider sees it on the id it was
	// asked for, and only there.
	q, err := client.Provision(ctx, ProvisionSpec{Name: "code", Mode: "fake_codegen", Config: map[string]any{"image": "x"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Release(ctx, q.ID, ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	fp.mu.Lock()
	purged := slices.Clone(fp.purged)
	fp.mu.Unlock()
	if !slices.Equal(purged, []string{q.ID}) {
		t.Errorf("purged %q, want [%s]", purged, q.ID)
	}
	if _, err := client.Provision(ctx, ProvisionSpec{Name: "code", Mode: "fake_codegen", Config: map[string]any{"image": "x"}}, 0); err != nil {
		t.Fatal(err)
	}
	stop()
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if !fp.closed || len(fp.held) != 0 {
		t.Errorf("after Stop: closed %v, held %d", fp.closed, len(fp.held))
	}
}

// TestProviderOldPlugin: a plugin built before providers (only the
// Sandbox service) answers Provision, Release and List at once with
// ErrNoProviderService, not a hang.
func TestProviderOldPlugin(t *testing.T) {
	h := startServer(t, testModes())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := h.client.Provision(ctx, ProvisionSpec{Name: "code", Mode: "x"}, 0)
	if !errors.Is(err, ErrNoProviderService) || !errors.Is(err, sandbox.ErrTransport) {
		t.Errorf("Provision: %v", err)
	}
	if _, err := h.client.List(ctx, ListOptions{}); !errors.Is(err, ErrNoProviderService) {
		t.Errorf("List: %v", err)
	}
	if err := h.client.Release(ctx, "x", ReleaseOptions{}); !errors.Is(err, ErrNoProviderService) {
		t.Errorf("Release: %v", err)
	}
}

func TestServeOptsProviders(t *testing.T) {
	fp := &fakeProvider{}
	for _, tc := range []struct {
		opts ServeOpts
		want string
	}{
		{ServeOpts{Name: "p", Version: "1.0.0", Providers: map[string]Provider{"a": fp}}, ""},
		{ServeOpts{Name: "p", Version: "1.0.0", Providers: map[string]Provider{"a": nil}}, "nil provider"},
		{ServeOpts{Name: "p", Version: "1.0.0", Modes: map[string]sandbox.Factory{"a": direct.Factory}, Providers: map[string]Provider{"a": fp}}, "both a mode and a provider"},
		{ServeOpts{Name: "p", Version: "1.0.0", Providers: map[string]Provider{"a": fp}, Descriptions: map[string]string{"a": "x"}, ConfigKeys: map[string][]string{"a": {"image"}}}, ""},
	} {
		err := tc.opts.validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// brokenProvider lists what it holds with an error, as a provider
// whose cluster answered in part.
type brokenProvider struct {
	fakeProvider
	partial []Provisioned
	err     error
}

func (b *brokenProvider) List(context.Context, ListOptions) ([]Provisioned, error) {
	return b.partial, b.err
}

// A provider that cannot list hides none of the others' sandboxes: what
// was listed comes with a warning each for what was not. A plugin that
// can list nothing at all fails the List, as it did before warnings.
func TestListIsPartialNotFailed(t *testing.T) {
	fp := &fakeProvider{held: map[string]Provisioned{}}
	broken := &brokenProvider{
		partial: []Provisioned{{ID: "half", Name: "b", Mode: "b_codegen"}},
		err:     errors.Join(errors.New("namespace x of https://10.0.0.1: connection refused"), errors.New("namespace y: forbidden")),
	}
	client, _ := localClient(t, ServeOpts{
		Name: "prov", Version: "1.0.0",
		Providers: map[string]Provider{"a_codegen": fp, "b_codegen": broken},
	})
	ctx := context.Background()
	p, err := client.Provision(ctx, ProvisionSpec{Name: "a", Mode: "a_codegen", Config: map[string]any{"image": "x"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	l, err := client.List(ctx, ListOptions{})
	if err != nil {
		t.Fatalf("List: %v, want the listing with warnings", err)
	}
	ids := map[string]bool{}
	for _, s := range l.Sandboxes {
		ids[s.ID] = true
	}
	want := []string{"namespace x of https://10.0.0.1: connection refused", "namespace y: forbidden"}
	if len(ids) != 2 || !ids[p.ID] || !ids["half"] || !slices.Equal(l.Warnings, want) {
		t.Errorf("List: sandboxes %v, warnings %q; want %s and half, warnings %q", ids, l.Warnings, p.ID, want)
	}

	alone, _ := localClient(t, ServeOpts{
		Name: "prov", Version: "1.0.0",
		Providers: map[string]Provider{"b_codegen": &brokenProvider{err: errors.New("cluster unreachable")}},
	})
	if l, err := alone.List(ctx, ListOptions{}); err == nil || !strings.Contains(err.Error(), "cluster unreachable") {
		t.Errorf("List of a plugin that listed nothing: %+v, %v; want its error", l, err)
	}
}

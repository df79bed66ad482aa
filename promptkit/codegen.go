package promptkit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/codegen"
	"github.com/altairalabs/promptkit-sandbox/config"
)

// CodegenRequest asks for one codegen sandbox: an MCP server (sandboxd)
// on a workspace, provisioned by the plugin serving the provider mode
// (docker_codegen, kubectl_codegen) a RuntimeConfig declares it with.
type CodegenRequest struct {
	// Sandbox is the name the sandbox is declared under in
	// spec.sandboxes.
	Sandbox string
	// RuntimeConfig is the path of the RuntimeConfig declaring Sandbox.
	// Empty means the declarations PromptKit has loaded through this
	// adapter (sdk.WithRuntimeConfig after Register).
	RuntimeConfig string
	// Workspace, when set, replaces the entry's workspace (a host
	// directory; relative to BaseDir). Neither set: the provider makes a
	// fresh one, removed with the sandbox.
	Workspace string
	// Image or Language, when set, replaces the entry's image and
	// language keys (which exclude each other); not both.
	Image, Language string
	// IdleTimeout, when positive, replaces the entry's idle_timeout: the
	// provider releases the sandbox once nothing has been connected to
	// it for this long.
	IdleTimeout time.Duration
	// Timeout bounds the provisioning (plugin.DefaultProvisionTimeout
	// when zero).
	Timeout time.Duration
}

// CodegenSandbox is a provisioned codegen sandbox. Close releases it; so
// do the provider's idle timeout, Adapter.Close and the death of this
// process (the plugin follows its host, the container or pod follows
// the plugin).
type CodegenSandbox struct {
	// Name is the sandbox's declared name, ID the provider's id of it.
	Name, ID string
	// URL is the base URL, "http://127.0.0.1:PORT": PromptKit's default
	// (SSE) MCP client dials URL+"/sse", its Streamable HTTP client
	// posts to URL. Endpoint is the Streamable HTTP URL (URL+"/mcp").
	URL, Endpoint string
	// Token is the bearer token every request needs; Headers carries it
	// as PromptKit's MCP clients send it.
	Token   string
	Headers map[string]string
	// Instance is what runs it: the container id (docker_codegen) or the
	// pod name (kubectl_codegen).
	Instance string
	// Workspace is the host directory the agent works in.
	Workspace string
	// Details are the provider's own (image, languages, cache, ...).
	Details map[string]string

	a       *Adapter
	once    sync.Once
	err     error
	created time.Time
}

// Close releases the sandbox, once; later calls return the first
// result. A sandbox the provider already released (idle) or whose
// plugin is gone closes without error (see codegen.Release).
func (s *CodegenSandbox) Close() error {
	s.once.Do(func() {
		s.a.forgetCodegen(s)
		if err := codegen.Release(context.Background(), s.a.host, s.ID); err != nil {
			s.err = fmt.Errorf("release codegen sandbox %s (%s): %w", s.Name, s.ID, err)
		}
	})
	return s.err
}

// ProvisionCodegen provisions the codegen sandbox req names and returns
// once its MCP endpoint has answered an initialize with its token.
func (a *Adapter) ProvisionCodegen(ctx context.Context, req CodegenRequest) (*CodegenSandbox, error) {
	ctx, done, ok := a.enter(ctx)
	if !ok {
		return nil, ErrClosed
	}
	defer done()
	s, err := a.codegenEntry(req)
	if err != nil {
		return nil, err
	}
	workspace := req.Workspace
	if workspace != "" && !filepath.IsAbs(workspace) {
		workspace = filepath.Join(a.baseDir, workspace)
	}
	p, err := a.host.Provision(ctx, s, workspace, req.Timeout)
	if err != nil {
		return nil, fmt.Errorf("provision codegen sandbox %s: %w", s.Name, err)
	}
	sb := &CodegenSandbox{
		Name:      s.Name,
		ID:        p.ID,
		URL:       strings.TrimSuffix(p.Endpoint, "/mcp"),
		Endpoint:  p.Endpoint,
		Token:     p.Token,
		Headers:   map[string]string{"Authorization": "Bearer " + p.Token},
		Instance:  instanceOf(p.Details),
		Workspace: p.Workspace,
		Details:   p.Details,
		a:         a,
		created:   time.Now(),
	}
	if !a.holdCodegen(sb) {
		// Close began while it was provisioned.
		_ = sb.Close()
		return nil, ErrClosed
	}
	a.stats.codegens.Add(1)
	return sb, nil
}

// instanceOf is the container or pod a provider's details name.
func instanceOf(details map[string]string) string {
	if id := details["container"]; id != "" {
		return id
	}
	return details["pod"]
}

// codegenEntry is the declaration req names, with its overrides.
func (a *Adapter) codegenEntry(req CodegenRequest) (config.Sandbox, error) {
	if req.Sandbox == "" {
		return config.Sandbox{}, errors.New("provision codegen sandbox: no sandbox name")
	}
	var s config.Sandbox
	if req.RuntimeConfig != "" {
		path := req.RuntimeConfig
		if !filepath.IsAbs(path) {
			path = filepath.Join(a.baseDir, path)
		}
		f, err := config.Load(path, config.Options{Modes: a.host, LookupEnv: a.opts.LookupEnv})
		if err != nil {
			return config.Sandbox{}, err
		}
		found, ok := f.Sandbox(req.Sandbox)
		if !ok {
			return config.Sandbox{}, &config.Error{Problems: []config.Problem{{File: f.Path,
				Msg: fmt.Sprintf("no sandbox named %q (sandboxes: %s)", req.Sandbox, names(f.Sandboxes))}}}
		}
		s = *found
	} else {
		found, ok := a.declared(req.Sandbox)
		if !ok {
			return config.Sandbox{}, &UndeclaredError{Name: req.Sandbox, Declared: a.declaredNames()}
		}
		s = found
	}
	if !a.host.Provides(context.Background(), s.Mode, s.Plugin, s.Version) {
		return config.Sandbox{}, fmt.Errorf("sandbox %s: mode %s hands out no MCP endpoint: a codegen sandbox needs a provider mode such as docker_codegen or kubectl_codegen", s.Name, s.Mode)
	}
	s.Config = maps.Clone(s.Config)
	// The two keys exclude each other: an override of one replaces
	// whichever the entry set.
	if req.Image != "" {
		delete(s.Config, "language")
		s.Config["image"] = req.Image
	}
	if req.Language != "" {
		delete(s.Config, "image")
		s.Config["language"] = req.Language
	}
	if req.Image != "" && req.Language != "" {
		return config.Sandbox{}, fmt.Errorf("sandbox %s: give an image or a language, not both", s.Name)
	}
	if req.IdleTimeout > 0 {
		s.Config["idle_timeout"] = req.IdleTimeout.String()
	}
	return s, nil
}

// UndeclaredError is a codegen sandbox asked for by a name no loaded
// RuntimeConfig declares.
type UndeclaredError struct {
	Name     string
	Declared []string // the provider-mode sandboxes PromptKit has loaded
}

func (e *UndeclaredError) Error() string {
	known := "none"
	if len(e.Declared) > 0 {
		known = strings.Join(e.Declared, ", ")
	}
	return fmt.Sprintf("codegen sandbox %q: no RuntimeConfig loaded through this adapter declares it (declared: %s); "+
		"declare it in spec.sandboxes with a provider mode such as docker_codegen and load the config with sdk.WithRuntimeConfig "+
		"after Register, or name the file in RuntimeConfig", e.Name, known)
}

func names(ss []config.Sandbox) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// holdCodegen records a provisioned sandbox so that Close releases it;
// false once the adapter is closed.
func (a *Adapter) holdCodegen(s *CodegenSandbox) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	if a.codegens == nil {
		a.codegens = map[*CodegenSandbox]struct{}{}
	}
	a.codegens[s] = struct{}{}
	return true
}

func (a *Adapter) forgetCodegen(s *CodegenSandbox) {
	a.mu.Lock()
	delete(a.codegens, s)
	a.mu.Unlock()
}

// CodegenSandboxes lists the codegen sandboxes this adapter holds,
// oldest first.
func (a *Adapter) CodegenSandboxes() []*CodegenSandbox {
	a.mu.Lock()
	out := slices.Collect(maps.Keys(a.codegens))
	a.mu.Unlock()
	slices.SortFunc(out, func(x, y *CodegenSandbox) int { return x.created.Compare(y.created) })
	return out
}

// closeCodegens releases sandboxes side by side: each is a container
// removal or a pod deletion.
func closeCodegens(ss []*CodegenSandbox) error {
	errs := make([]error, len(ss))
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Go(func() { errs[i] = s.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

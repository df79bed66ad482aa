package arena

import (
	"context"
	"fmt"

	"github.com/AltairaLabs/promptarena/arena/mcpsource"

	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

// provisionCodegen provisions through the adapter of a's plugin
// directory.
func (s *Source) provisionCodegen(ctx context.Context, a Args) (mcpsource.MCPConn, func() error, error) {
	ad, err := s.adapter(a.PluginDir)
	if err != nil {
		return mcpsource.MCPConn{}, nil, err
	}
	sb, err := ad.ProvisionCodegen(ctx, promptkit.CodegenRequest{
		RuntimeConfig: a.Config,
		Sandbox:       a.Sandbox,
		Workspace:     a.Workspace,
		Image:         a.Image,
		Language:      a.Language,
	})
	if err != nil {
		return mcpsource.MCPConn{}, nil, err
	}
	return mcpsource.MCPConn{URL: sb.URL, Headers: sb.Headers, ContainerID: sb.Instance}, sb.Close, nil
}

// adapter returns the adapter searching pluginDir ("" for the source's
// options), making it on first use.
func (s *Source) adapter(pluginDir string) (*promptkit.Adapter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if a, ok := s.adapters[pluginDir]; ok {
		return a, nil
	}
	opts := s.opts
	if pluginDir != "" {
		opts.PluginDirs = []string{pluginDir}
	}
	a, err := promptkit.New(opts)
	if err != nil {
		return nil, fmt.Errorf("plugin_dir %q: %w", pluginDir, err)
	}
	s.adapters[pluginDir] = a
	return a, nil
}

package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type nopSandbox struct{ name string }

func (s nopSandbox) Name() string { return s.name }
func (nopSandbox) Spawn(context.Context, Request) (Response, error) {
	return Response{}, nil
}

func nopFactory(_ context.Context, name string, _ map[string]any) (Sandbox, error) {
	return nopSandbox{name}, nil
}

func TestRegistryIsAValue(t *testing.T) {
	a, b := NewRegistry(), NewRegistry()
	if err := a.Register("x", nopFactory); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Lookup("x"); ok {
		t.Fatal("registration leaked between registries")
	}
	if !a.Serves("x") || b.Serves("x") {
		t.Fatalf("Serves(x): %v and %v, want true and false", a.Serves("x"), b.Serves("x"))
	}
	var zero Registry
	if err := zero.Register("x", nopFactory); err != nil {
		t.Fatalf("zero Registry: %v", err)
	}
}

func TestRegistryDuplicate(t *testing.T) {
	r := NewRegistry()
	if err := r.Register("docker_run", nopFactory); err != nil {
		t.Fatal(err)
	}
	err := r.Register("docker_run", nopFactory)
	if !errors.Is(err, ErrDuplicateMode) {
		t.Fatalf("duplicate: got %v, want ErrDuplicateMode", err)
	}
	if got, want := err.Error(), `register mode "docker_run": sandbox: mode already registered`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestRegistryRejectsBadRegistrations(t *testing.T) {
	r := NewRegistry()
	if err := r.Register("", nopFactory); err == nil {
		t.Fatal("empty mode accepted")
	}
	if err := r.Register("x", nil); err == nil {
		t.Fatal("nil factory accepted")
	}
}

func TestRegistryUnknownModeListsKnown(t *testing.T) {
	r := NewRegistry()
	for _, m := range []string{"docker_run", "direct", "kubectl_exec"} {
		if err := r.Register(m, nopFactory); err != nil {
			t.Fatal(err)
		}
	}
	_, err := r.Open(context.Background(), "s", "dockr_run", nil)
	var ue *UnknownModeError
	if !errors.As(err, &ue) {
		t.Fatalf("got %T %v, want *UnknownModeError", err, err)
	}
	want := `unknown sandbox mode "dockr_run" (known modes: direct, docker_run, kubectl_exec)`
	if err.Error() != want {
		t.Fatalf("got %q, want %q", err.Error(), want)
	}
	if got := NewRegistry().Modes(); len(got) != 0 {
		t.Fatalf("empty registry modes = %v", got)
	}
	_, err = NewRegistry().Open(context.Background(), "s", "x", nil)
	if !strings.Contains(err.Error(), "known modes: none") {
		t.Fatalf("got %q", err)
	}
}

func TestRegistryOpenWrapsFactoryError(t *testing.T) {
	r := NewRegistry()
	boom := errors.New(`config: unknown key "imgae"`)
	_ = r.Register("docker_run", func(context.Context, string, map[string]any) (Sandbox, error) { return nil, boom })
	_ = r.Register("nil", func(context.Context, string, map[string]any) (Sandbox, error) { return nil, nil })
	_, err := r.Open(context.Background(), "pii", "docker_run", nil)
	if !errors.Is(err, boom) {
		t.Fatalf("factory error lost: %v", err)
	}
	if got, want := err.Error(), `open sandbox "pii" (mode docker_run): config: unknown key "imgae"`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, err := r.Open(context.Background(), "pii", "nil", nil); err == nil {
		t.Fatal("nil sandbox accepted")
	}
	sb, err := r.Open(context.Background(), "ok", "docker_run", nil)
	if err == nil || sb != nil {
		t.Fatal("expected failure")
	}
}

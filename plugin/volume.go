package plugin

import (
	"context"
	"errors"
	"strings"
	"time"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
)

// VolumeKeeper is a Provider that keeps named workspace volumes: a
// ProvisionSpec.WorkspaceVolume is created on first use and mounted as
// the sandbox's workspace, survives the sandbox's Release unless
// ReleaseOptions.Purge, and is attached to at most one sandbox at a
// time. A Provider that is not one refuses a WorkspaceVolume with
// ErrNoWorkspaceVolumes.
type VolumeKeeper interface {
	// Volumes lists the workspace volumes the provider keeps, attached
	// or not. With an error, what it returns is what it could list
	// (the volumes of the namespaces it reached, say).
	Volumes(ctx context.Context) ([]WorkspaceVolume, error)
}

// WorkspaceVolume is a workspace volume a provider keeps.
type WorkspaceVolume struct {
	Name string `json:"name"`
	Mode string `json:"mode"`
	// Sandbox is the id of the sandbox it is attached to, "" when none.
	Sandbox string            `json:"sandbox,omitempty"`
	Created time.Time         `json:"created"`
	Details map[string]string `json:"details,omitempty"`
}

// Listing is what a List answers: the sandboxes provisioned and not
// released, and the workspace volumes kept.
type Listing struct {
	Sandboxes []Provisioned     `json:"sandboxes"`
	Volumes   []WorkspaceVolume `json:"volumes"`
	// Warnings say what could not be listed; the rest is.
	Warnings []string `json:"warnings,omitempty"`
}

// ListWarnings is the error of a listing that is partial: what could not
// be listed, one warning each. A caller that can show part of a listing
// shows what came with it and the warnings.
type ListWarnings []string

func (w ListWarnings) Error() string { return strings.Join(w, "; ") }

// listWarnings is the warnings err holds: a ListWarnings' own, one per
// error joined in it, or its message; none for nil.
func listWarnings(err error) []string {
	if err == nil {
		return nil
	}
	if w, ok := err.(ListWarnings); ok {
		return w
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range joined.Unwrap() {
			out = append(out, listWarnings(e)...)
		}
		return out
	}
	return []string{err.Error()}
}

// ErrNoWorkspaceVolumes is a Provision asking for a workspace volume of
// a provider that keeps none, or of a plugin built before workspace
// volumes.
var ErrNoWorkspaceVolumes = errors.New("its provider keeps no workspace volumes")

func volumeToProto(v WorkspaceVolume) *sandboxpb.WorkspaceVolume {
	out := &sandboxpb.WorkspaceVolume{Name: v.Name, Mode: v.Mode, Sandbox: v.Sandbox, Details: v.Details}
	if !v.Created.IsZero() {
		out.CreatedUnixNanos = v.Created.UnixNano()
	}
	return out
}

func volumeFromProto(v *sandboxpb.WorkspaceVolume) WorkspaceVolume {
	out := WorkspaceVolume{Name: v.GetName(), Mode: v.GetMode(), Sandbox: v.GetSandbox(), Details: v.GetDetails()}
	if n := v.GetCreatedUnixNanos(); n != 0 {
		out.Created = time.Unix(0, n)
	}
	return out
}

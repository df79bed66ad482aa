package goedit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
)

// DefaultLimits bound one edit's child: a 4 MiB file of real code is
// parsed, edited and formatted in 4 s and 125 MiB, a package of 750 KB
// type-checked in 1 s. The memory limit is of address space, of which
// the Go runtime reserves 1.2 GiB at start without using it: 2 GiB
// leaves the edit about 800 MiB.
var DefaultLimits = child.Limits{
	Timeout: 30 * time.Second,
	Memory:  2 << 30,
	Output:  64 << 20,
}

// Isolated makes the edits of EditBody, InsertAfterMethod and
// ChangeSignatureInPackage in a child process of Self (see package
// child), under Limits: what an agent's text costs to parse, format and
// type-check is not only its size (see MaxNesting), and a child that
// runs out of memory or time is killed, where the daemon would die or
// stall. The input limits are checked here first, so what they refuse
// starts no process.
type Isolated struct {
	Self   string
	Limits child.Limits
}

// childEdit names the edits among the functions a child of sandboxd's
// executable runs.
const childEdit = "goedit"

func init() { child.Register(childEdit, serveEdit) }

// job is one edit as it crosses to the child.
type job struct {
	Op       string // "body", "method", "signature"
	Name     string
	Src      []byte
	Spec     string
	Text     string
	Recv     string
	Method   string
	Pkg      []File
	CallArgs *string
}

// reply is the child's answer.
type reply struct {
	Src    []byte
	Change *SignatureChange
}

func serveEdit(input []byte) ([]byte, error) {
	var j job
	if err := json.Unmarshal(input, &j); err != nil {
		return nil, fmt.Errorf("internal error: %w", err)
	}
	var r reply
	var err error
	switch j.Op {
	case "body":
		r.Src, err = EditBody(j.Name, j.Src, j.Spec, j.Text)
	case "method":
		r.Src, err = InsertAfterMethod(j.Name, j.Src, j.Recv, j.Method, j.Text)
	case "signature":
		r.Change, err = ChangeSignatureInPackage(j.Pkg, j.Name, j.Spec, j.Text, j.CallArgs)
	default:
		err = fmt.Errorf("internal error: no edit %q", j.Op)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// run checks the limits, then makes the edit in a child.
func (x Isolated) run(ctx context.Context, j job, checks ...error) (reply, error) {
	for _, err := range checks {
		if err != nil {
			return reply{}, err
		}
	}
	input, err := json.Marshal(j)
	if err != nil {
		return reply{}, err
	}
	out, err := child.Call(ctx, x.Self, childEdit, x.Limits, input)
	var failure *child.Failure
	switch {
	case errors.As(err, &failure):
		return reply{}, failure
	case errors.Is(err, child.ErrTimeout):
		return reply{}, fmt.Errorf("the edit took longer than %s and was stopped; nothing was written", x.Limits.Timeout)
	case errors.Is(err, child.ErrMemory):
		return reply{}, fmt.Errorf("the edit needed more than %d MiB of memory and was stopped; nothing was written", x.Limits.Memory>>20)
	case err != nil:
		return reply{}, fmt.Errorf("the edit's process: %w", err)
	}
	var r reply
	if err := json.Unmarshal(out, &r); err != nil {
		return reply{}, fmt.Errorf("the edit's process: %w", err)
	}
	return r, nil
}

// EditBody is EditBody, in a child.
func (x Isolated) EditBody(ctx context.Context, name string, src []byte, spec, body string) ([]byte, error) {
	r, err := x.run(ctx, job{Op: "body", Name: name, Src: src, Spec: spec, Text: body},
		checkFile("the file", src), checkFragment("new_body", body))
	return r.Src, err
}

// InsertAfterMethod is InsertAfterMethod, in a child.
func (x Isolated) InsertAfterMethod(ctx context.Context, name string, src []byte, recv, method, decl string) ([]byte, error) {
	r, err := x.run(ctx, job{Op: "method", Name: name, Src: src, Recv: recv, Method: method, Text: decl},
		checkFile("the file", src), checkFragment("new_method", decl))
	return r.Src, err
}

// ChangeSignatureInPackage is ChangeSignatureInPackage, in a child.
func (x Isolated) ChangeSignatureInPackage(ctx context.Context, pkg []File, file, spec, sig string, callArgs *string) (*SignatureChange, error) {
	checks := []error{checkFragment("new_signature", sig)}
	for _, f := range pkg {
		if f.Name == file {
			checks = append([]error{checkFile("the file", f.Src)}, checks...)
		}
	}
	if callArgs != nil {
		checks = append(checks, checkCallArgs(*callArgs))
	}
	r, err := x.run(ctx, job{Op: "signature", Name: file, Pkg: pkg, Spec: spec, Text: sig, CallArgs: callArgs}, checks...)
	return r.Change, err
}

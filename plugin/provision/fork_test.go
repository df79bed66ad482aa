package provision

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// detailedBox is a fakeBox whose Info carries details, as a provider's do.
type detailedBox struct {
	fakeBox
	details map[string]string
}

func (b *detailedBox) Info() plugin.Provisioned {
	info := b.fakeBox.Info()
	info.Details = b.details
	return info
}

func TestAddForksMarksAndHoldsEach(t *testing.T) {
	h := NewHolder(nil)
	defer h.Close()
	n := 0
	out, err := h.AddForks(context.Background(), "src", 3, func() (Box, error) {
		n++
		return &detailedBox{fakeBox: fakeBox{id: "f" + strconv.Itoa(n)}, details: map[string]string{}}, nil
	}, func(Box) { t.Error("discard of a fork that was held") })
	if err != nil || len(out) != 3 {
		t.Fatalf("AddForks: %d forks, %v; want 3, nil", len(out), err)
	}
	for _, p := range out {
		if p.Details["start"] != "fork" || p.Details["forked_from"] != "src" {
			t.Errorf("fork %s details %v, want start=fork forked_from=src", p.ID, p.Details)
		}
		if _, held := h.Get(p.ID); !held {
			t.Errorf("fork %s is not held", p.ID)
		}
	}
}

func TestAddForksIsAllOrNone(t *testing.T) {
	h := NewHolder(nil)
	defer h.Close()
	var made []*detailedBox
	broke := errors.New("no room for a third")
	_, err := h.AddForks(context.Background(), "src", 3, func() (Box, error) {
		if len(made) == 2 {
			return nil, broke
		}
		b := &detailedBox{fakeBox: fakeBox{id: "f" + strconv.Itoa(len(made))}, details: map[string]string{}}
		made = append(made, b)
		return b, nil
	}, func(Box) {})
	if !errors.Is(err, broke) || !strings.HasPrefix(err.Error(), "fork src: ") {
		t.Fatalf("AddForks = %v, want the third's error, wrapped as fork src", err)
	}
	for _, b := range made {
		if _, held := h.Get(b.id); held || b.tornDown.Load() != 1 {
			t.Errorf("fork %s: held %v, torn down %d times; want released once", b.id, held, b.tornDown.Load())
		}
	}
}

func TestForkSourceChecks(t *testing.T) {
	h := NewHolder(nil)
	defer h.Close()
	if err := h.Add(&fakeBox{id: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ForkSource[*fakeBox](h, "a", MaxForks+1, "m"); err == nil || !strings.Contains(err.Error(), "count must be between 1 and 16") {
		t.Errorf("count %d: %v", MaxForks+1, err)
	}
	if _, err := ForkSource[*fakeBox](h, "gone", 1, "m"); !errors.Is(err, plugin.ErrNotProvisioned) {
		t.Errorf("unknown id: %v, want ErrNotProvisioned", err)
	}
	if _, err := ForkSource[*detailedBox](h, "a", 1, "m"); err == nil || err.Error() != "fork a: not a m sandbox" {
		t.Errorf("another kind: %v", err)
	}
	if b, err := ForkSource[*fakeBox](h, "a", 1, "m"); err != nil || b.id != "a" {
		t.Errorf("ForkSource = %v, %v", b, err)
	}
}

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// DecodeConfig fills dst (a pointer to a struct with json tags) from a
// factory's cfg map. Keys dst does not declare are rejected with an error
// naming the key, so a typo in a RuntimeConfig fails at load instead of
// being silently ignored.
func DecodeConfig(cfg map[string]any, dst any) error {
	if len(cfg) == 0 {
		return nil
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := decodeStrict(raw, dst); err != nil {
		return fmt.Errorf("config: %s", configErrorText(keyOf(cfg, dst, err), err))
	}
	return nil
}

func decodeStrict(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

// keyOf finds the key whose value caused err by decoding the keys one at a
// time into a scratch value: errors raised by a field's own UnmarshalJSON
// (a bad duration, say) do not say which key they came from.
func keyOf(cfg map[string]any, dst any, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) || strings.HasPrefix(err.Error(), "json: unknown field ") {
		return ""
	}
	t := reflect.TypeOf(dst)
	if t.Kind() != reflect.Pointer {
		return ""
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw, merr := json.Marshal(map[string]any{k: cfg[k]})
		if merr != nil {
			continue
		}
		if decodeStrict(raw, reflect.New(t.Elem()).Interface()) != nil {
			return k
		}
	}
	return ""
}

// configErrorText rewords encoding/json's messages, which talk about Go
// types, into what a user editing YAML needs to know.
func configErrorText(key string, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("key %q: expected %s, got %s", te.Field, describeKind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("expected %s, got %s", describeKind(te.Type.Kind().String()), te.Value)
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown key " + rest
	}
	msg = strings.TrimPrefix(msg, "json: ")
	if key != "" {
		return fmt.Sprintf("key %q: %s", key, msg)
	}
	return msg
}

func describeKind(k string) string {
	switch k {
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "a mapping"
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "bool":
		return "true or false"
	}
	return "a " + k
}

// Duration is a time.Duration that decodes from a Go duration string
// ("1.5s", "500ms") or from a number of milliseconds.
type Duration time.Duration

// UnmarshalJSON accepts "250ms"-style strings and integer milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q (want e.g. \"500ms\", \"2s\")", s)
		}
		if v < 0 {
			return fmt.Errorf("invalid duration %q: negative", s)
		}
		*d = Duration(v)
		return nil
	}
	var ms int64
	if err := json.Unmarshal(b, &ms); err != nil {
		return fmt.Errorf("invalid duration %s (want a string such as \"2s\" or integer milliseconds)", b)
	}
	if ms < 0 {
		return fmt.Errorf("invalid duration %d: negative", ms)
	}
	*d = Duration(time.Duration(ms) * time.Millisecond)
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// ConfigKeys lists the keys a config struct declares (its json tags, in
// field order, embedded structs' in place), so a backend's key list is
// derived from the struct DecodeConfig fills instead of written twice.
// v is the struct or a pointer to it.
func ConfigKeys(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var keys []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			// Promoted, as encoding/json does, exported type or not.
			keys = append(keys, ConfigKeys(reflect.Zero(f.Type).Interface())...)
		case !f.IsExported():
		case name == "":
			keys = append(keys, f.Name)
		default:
			keys = append(keys, name)
		}
	}
	return keys
}

// Limits are what the timeout and output_limit keys, which every backend
// has, say once checked: DefaultTimeout and DefaultOutputLimit where a
// key is absent.
type Limits struct {
	Timeout     time.Duration
	OutputLimit int
}

// ParseLimits checks the timeout and output_limit keys (nil when absent):
// a timeout must be positive, an output limit a positive number of bytes.
// Every problem is reported.
func ParseLimits(timeout *Duration, outputLimit *int) (Limits, error) {
	l := Limits{Timeout: DefaultTimeout, OutputLimit: DefaultOutputLimit}
	var errs []error
	if timeout != nil {
		if *timeout <= 0 {
			errs = append(errs, fmt.Errorf("config: key %q: must be greater than zero", "timeout"))
		}
		l.Timeout = time.Duration(*timeout)
	}
	if outputLimit != nil {
		if *outputLimit <= 0 {
			errs = append(errs, fmt.Errorf("config: key %q: must be a positive number of bytes, got %d", "output_limit", *outputLimit))
		}
		l.OutputLimit = *outputLimit
	}
	return l, errors.Join(errs...)
}

// Problems collects what a config check finds, so that every problem is
// reported at once, not only the first. The zero value is ready.
type Problems struct{ errs []error }

// Add records err; nil is no problem.
func (p *Problems) Add(err error) {
	if err != nil {
		p.errs = append(p.errs, err)
	}
}

// Err is every problem recorded, joined; nil when there is none.
func (p *Problems) Err() error { return errors.Join(p.errs...) }

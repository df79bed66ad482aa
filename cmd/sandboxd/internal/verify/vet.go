package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// maxVetObject bounds one package's JSON object from go vet -json.
const maxVetObject = 16 << 20

// vetParser reads go vet -json. vet prints one indented JSON object per
// package ({"pkg": {"analyzer": [diagnostics] or {"error": ...}}}), with
// its braces alone on a line at the margin, so objects are gathered line
// by line and decoded whole. Type errors come on stderr as text.
type vetParser struct {
	collector
	obj      bytes.Buffer
	inObject bool
	bad      int // objects that did not decode
}

func newVetParser() Parser { return &vetParser{} }

type vetDiagnostic struct {
	Posn    string `json:"posn"`
	Message string `json:"message"`
}

func (p *vetParser) Line(stream Stream, line []byte) {
	if stream == Stderr {
		p.textLine(string(line))
		return
	}
	if !p.inObject {
		if string(line) == "{" {
			p.inObject = true
			p.obj.Reset()
			p.obj.Write(line)
		}
		return
	}
	if p.obj.Len()+len(line) > maxVetObject {
		p.inObject, p.bad = false, p.bad+1
		p.obj = bytes.Buffer{}
		return
	}
	p.obj.WriteByte('\n')
	p.obj.Write(line)
	if string(line) == "}" {
		p.inObject = false
		p.decode(p.obj.Bytes())
		p.obj.Reset()
	}
}

func (p *vetParser) decode(obj []byte) {
	var pkgs map[string]map[string]json.RawMessage
	if err := json.Unmarshal(obj, &pkgs); err != nil {
		p.bad++
		return
	}
	for _, pkg := range slices.Sorted(maps.Keys(pkgs)) {
		analyzers := pkgs[pkg]
		for _, name := range slices.Sorted(maps.Keys(analyzers)) {
			raw := analyzers[name]
			var diags []vetDiagnostic
			if err := json.Unmarshal(raw, &diags); err == nil {
				for _, d := range diags {
					file, line, col := splitPosition(d.Posn)
					p.add(Finding{File: file, Line: line, Col: col, Rule: name, Message: d.Message, Package: pkg})
				}
				continue
			}
			var failed struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(raw, &failed); err == nil && failed.Error != "" {
				p.add(Finding{Package: pkg, Rule: name, Message: "analyzer failed: " + failed.Error})
				continue
			}
			p.bad++
		}
	}
}

// textLine reads stderr: "# pkg" headers, and the type errors that kept
// vet from analysing a package.
func (p *vetParser) textLine(line string) {
	if strings.HasPrefix(line, "#") {
		return
	}
	if f, ok := parsePosition(line); ok {
		f.Rule = "compile"
		p.add(f)
	}
}

func (p *vetParser) Finish(int) Outcome {
	if p.inObject {
		p.bad++
	}
	var summary string
	if p.bad > 0 {
		summary = fmt.Sprintf("%d unreadable JSON objects in go vet's output", p.bad)
	}
	return p.outcome(summary)
}

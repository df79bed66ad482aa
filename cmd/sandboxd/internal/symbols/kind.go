package symbols

import "strings"

// The kinds search_code reports, the same for every language.
const (
	KindFunction  = "function"
	KindMethod    = "method"
	KindClass     = "class"
	KindStruct    = "struct"
	KindInterface = "interface"
	KindEnum      = "enum"
	KindType      = "type"
	KindField     = "field"
	KindVariable  = "variable"
	KindConstant  = "constant"
	KindModule    = "module"
	KindMacro     = "macro"
)

// Kinds lists the kinds a query may filter on, in the order documented.
var Kinds = []string{KindFunction, KindMethod, KindClass, KindStruct, KindInterface, KindEnum, KindType, KindField, KindVariable, KindConstant, KindModule, KindMacro}

// ctagsKinds maps a ctags kind (long name, any of our languages) to ours;
// "" drops the tag. Go's func is a method when it has a receiver, which
// ctagsKind decides from the scope.
var ctagsKinds = map[string]string{
	// Go
	"func": KindFunction, "methodSpec": KindMethod, "struct": KindStruct, "interface": KindInterface,
	"type": KindType, "talias": KindType, "member": KindField, "var": KindVariable, "const": KindConstant,
	"package": "", "packageName": "", "anonMember": "", "receiver": "", "unknown": "",
	// Python, TypeScript, JavaScript, Rust
	"function": KindFunction, "method": KindMethod, "class": KindClass, "enum": KindEnum,
	"alias": KindType, "typedef": KindType, "field": KindField, "property": KindField,
	"variable": KindVariable, "constant": KindConstant, "enumerator": KindConstant,
	"getter": KindMethod, "setter": KindMethod, "generator": KindFunction,
	"module": KindModule, "namespace": KindModule, "macro": KindMacro,
	"implementation": "", // a Rust impl block: its methods are tagged themselves
	"local":          "", "parameter": "",
}

// ctagsKind normalizes a tag's kind; ok is false for tags left out.
// Unknown kinds are kept under their own name.
func ctagsKind(kind, scopeKind string) (string, bool) {
	k, known := ctagsKinds[kind]
	switch {
	case !known:
		return kind, kind != ""
	case k == "":
		return "", false
	case kind == "func" && scopeKind != "" && scopeKind != "package":
		return KindMethod, true // a Go method: scoped to its receiver's type
	case kind == "member" && scopeKind == "class":
		return KindMethod, true // Python: a def inside a class
	}
	return k, true
}

// kindAliases are the names a filter may use besides ours.
var kindAliases = map[string]string{
	"func": KindFunction, "fn": KindFunction, "def": KindFunction,
	"var": KindVariable, "const": KindConstant, "trait": KindInterface,
	"property": KindField, "member": KindField, "package": KindModule, "namespace": KindModule,
}

// kindFilter returns what a kind filter accepts: "type" takes every type
// (struct, class, interface, enum, alias); "" accepts everything.
func kindFilter(kind string) (func(string) bool, bool) {
	k := strings.ToLower(strings.TrimSpace(kind))
	if a, ok := kindAliases[k]; ok {
		k = a
	}
	switch k {
	case "":
		return func(string) bool { return true }, true
	case KindType:
		return func(got string) bool {
			switch got {
			case KindType, KindStruct, KindClass, KindInterface, KindEnum:
				return true
			}
			return false
		}, true
	}
	for _, known := range Kinds {
		if k == known {
			return func(got string) bool { return got == k }, true
		}
	}
	return nil, false
}

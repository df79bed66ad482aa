package lsp

// The few LSP types this client needs, as the specification (3.17)
// spells them; fields it never reads are left out.

// Position is a zero-based line and a character offset in the
// negotiated encoding's units.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open span between two positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// locationLink is the richer answer a server may give to definition.
type locationLink struct {
	TargetURI            string `json:"targetUri"`
	TargetRange          Range  `json:"targetRange"`
	TargetSelectionRange Range  `json:"targetSelectionRange"`
}

type textDocumentID struct {
	URI string `json:"uri"`
}

type textEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// workspaceEdit is a rename's answer: edits by document, in either of
// the two shapes servers use. documentChanges may also hold create,
// rename and delete operations, which have a kind.
type workspaceEdit struct {
	Changes         map[string][]textEdit `json:"changes"`
	DocumentChanges []documentChange      `json:"documentChanges"`
}

type documentChange struct {
	Kind         string `json:"kind"`
	TextDocument struct {
		URI     string `json:"uri"`
		Version *int   `json:"version"`
	} `json:"textDocument"`
	Edits []textEdit `json:"edits"`
}

// fileEvent is one workspace/didChangeWatchedFiles entry.
type fileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"`
}

// File change types of workspace/didChangeWatchedFiles.
const (
	fileCreated = 1
	fileChanged = 2
	fileDeleted = 3
)

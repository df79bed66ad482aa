// Package wire is PromptKit's exec-hook wire protocol as typed Go: the
// payloads PromptKit writes to a hook's stdin, the phases each hook type has,
// and the verdict a hook prints on stdout.
//
// The encoding is byte-for-byte what PromptKit itself sends, because hooks are
// written against PromptKit and must not be able to tell which runtime called
// them. That is why the payload structs carry no JSON tags (PromptKit's have
// none, so the keys are Go field names), why Message has a hand-written
// encoder (PromptKit derives "content" and "media_summary" on the way out),
// and why numbers inside free-form maps are kept as json.Number: a decoded
// payload re-encodes to the bytes it came from.
package wire

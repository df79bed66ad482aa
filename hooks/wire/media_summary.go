package wire

import (
	"fmt"
	"strings"
)

// MediaSummary is the overview PromptKit adds to every message that has
// parts, so a hook can see what media a message holds without walking it.
// It is computed on encode and never decoded.
type MediaSummary struct {
	TotalParts    int                `json:"total_parts"`
	TextParts     int                `json:"text_parts"`
	ImageParts    int                `json:"image_parts"`
	AudioParts    int                `json:"audio_parts"`
	VideoParts    int                `json:"video_parts"`
	DocumentParts int                `json:"document_parts"`
	MediaItems    []MediaItemSummary `json:"media_items,omitempty"`
}

// MediaItemSummary describes one image, audio, video or document part.
type MediaItemSummary struct {
	Type      string `json:"type"`
	Source    string `json:"source"`
	MIMEType  string `json:"mime_type"`
	SizeBytes int    `json:"size_bytes"`
	Detail    string `json:"detail,omitempty"`
	Loaded    bool   `json:"loaded"`
	Error     string `json:"error,omitempty"`
}

// MediaSummary returns the "media_summary" PromptKit writes for m, or nil
// when m has no parts (and the key is left out).
func (m Message) MediaSummary() *MediaSummary {
	if len(m.Parts) == 0 {
		return nil
	}
	s := &MediaSummary{TotalParts: len(m.Parts), MediaItems: []MediaItemSummary{}}
	for _, p := range m.Parts {
		switch p.Type {
		case ContentTypeText:
			s.TextParts++
			continue
		case ContentTypeImage:
			s.ImageParts++
		case ContentTypeAudio:
			s.AudioParts++
		case ContentTypeVideo:
			s.VideoParts++
		case ContentTypeDocument:
			s.DocumentParts++
		default:
			continue
		}
		s.MediaItems = append(s.MediaItems, summarizeMedia(p))
	}
	return s
}

// EncodedContent returns the "content" PromptKit writes for m; empty means
// the key is left out. Content wins when set; otherwise a message with parts
// gets its text parts joined by spaces, followed by a bracketed media count
// such as "[2 image(s), 1 audio file(s)]" if any part is not text. Tool
// results never carry content: the text is already in the result's parts.
func (m Message) EncodedContent() string {
	switch {
	case m.ToolResult != nil:
		return ""
	case m.Content != "" || len(m.Parts) == 0:
		return m.Content
	}
	var words []string
	counts := map[string]int{}
	nonText := 0
	for _, p := range m.Parts {
		if p.Type != ContentTypeText {
			counts[p.Type]++
			nonText++
			continue
		}
		if p.Text != nil {
			words = append(words, *p.Text)
		}
	}
	if nonText > 0 {
		// Only images, audio and video have a phrase; PromptKit still writes
		// the brackets when the other parts are documents or unknown types.
		var media []string
		for _, kind := range []struct{ typ, phrase string }{
			{ContentTypeImage, "image(s)"},
			{ContentTypeAudio, "audio file(s)"},
			{ContentTypeVideo, "video(s)"},
		} {
			if n := counts[kind.typ]; n > 0 {
				media = append(media, fmt.Sprintf("%d %s", n, kind.phrase))
			}
		}
		words = append(words, "["+strings.Join(media, ", ")+"]")
	}
	return strings.Join(words, " ")
}

// summarizeMedia describes one media part the way PromptKit does: the first
// of file path, URL, storage reference and inline data names the source, and
// only inline data makes the item "loaded" (its size estimated from base64).
func summarizeMedia(p ContentPart) MediaItemSummary {
	item := MediaItemSummary{Type: p.Type}
	media := p.Media
	if media == nil {
		item.Error = "no media content"
		return item
	}
	item.MIMEType = media.MIMEType
	inline := media.Data != nil && *media.Data != ""
	switch {
	case media.FilePath != nil:
		item.Source = *media.FilePath
		if inline {
			item.Loaded = true
			item.SizeBytes = base64DecodedSize(*media.Data)
		}
	case media.URL != nil:
		item.Source = *media.URL
		item.Loaded = inline
	case media.StorageReference != nil:
		item.Source = *media.StorageReference
	case inline:
		item.Source = "inline data"
		item.Loaded = true
		item.SizeBytes = base64DecodedSize(*media.Data)
	default:
		item.Source = "unknown"
		item.Error = "no data source"
	}
	if p.Type == ContentTypeImage && media.Detail != nil {
		item.Detail = *media.Detail
	}
	if media.SizeKB != nil {
		item.SizeBytes = int(*media.SizeKB * 1024)
	}
	return item
}

// base64DecodedSize estimates the decoded size of base64 text, ignoring
// padding, as PromptKit does.
func base64DecodedSize(data string) int {
	return len(data) * 3 / 4
}

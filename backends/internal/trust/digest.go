// Package trust is the machinery of the gateway's trust layer
// (docs/trust.md): the digest of a tool's or prompt's definition, the pin
// file that records the approved ones, the scanner that looks for
// injection markers in definitions, and the diff shown for a change. It
// decides nothing about backends; package backends applies it.
package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// Kind is what a definition defines.
type Kind string

const (
	Tool   Kind = "tool"
	Prompt Kind = "prompt"
	// Instructions are the instructions a server answers initialize with:
	// text for the model like a description, pinned as one per server.
	Instructions Kind = "instructions"
)

// Kinds are the kinds of definition, in the order they are shown.
var Kinds = []Kind{Tool, Prompt, Instructions}

// members are the members of a definition that its digest covers: what a
// model reads and what shapes the call. A tool's _meta, icons and
// execution are not: they change nothing a model is told.
var members = map[Kind][]string{
	Tool:         {"name", "title", "description", "inputSchema", "outputSchema", "annotations"},
	Prompt:       {"name", "title", "description", "arguments"},
	Instructions: {"instructions"},
}

// InstructionsObject is a server's instructions as the object their
// definition is made of and scanned in: {"instructions": text}.
func InstructionsObject(text string) json.RawMessage {
	b, _ := wire.Marshal(map[string]string{"instructions": text})
	return b
}

// InstructionsText is the text of an Instructions definition.
func (d Definition) InstructionsText() string {
	var v struct {
		Instructions string `json:"instructions"`
	}
	json.Unmarshal(d, &v)
	return v.Instructions
}

// Definition is the part of a tool or prompt that is pinned, in canonical
// form: the members the digest covers, objects' keys sorted, numbers as
// written, no insignificant whitespace. Two listings that differ only in
// member order or spacing have the same canonical form.
type Definition json.RawMessage

// Canonical returns the canonical form of raw, a tool or prompt object as
// a backend listed it.
func Canonical(kind Kind, raw json.RawMessage) (Definition, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%s definition: %w", kind, err)
	}
	out := make(map[string]any, len(members[kind]))
	for _, m := range members[kind] {
		v, ok := obj[m]
		if !ok || string(bytes.TrimSpace(v)) == "null" {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		var x any
		if err := d.Decode(&x); err != nil {
			return nil, fmt.Errorf("%s definition: %s: %w", kind, m, err)
		}
		out[m] = x
	}
	return wire.Marshal(out)
}

// Digest is a definition's digest: "sha256:" and the hex SHA-256 of its
// canonical form.
func (d Definition) Digest() string {
	sum := sha256.Sum256(d)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Indented is the definition with two-space indentation, one member per
// line: what a diff compares.
func (d Definition) Indented() string {
	var b bytes.Buffer
	if err := json.Indent(&b, d, "", "  "); err != nil {
		return string(d)
	}
	return b.String()
}

// MarshalJSON writes the definition as the JSON it is.
func (d Definition) MarshalJSON() ([]byte, error) {
	if len(d) == 0 {
		return []byte("null"), nil
	}
	return d, nil
}

// UnmarshalJSON keeps a copy of the JSON as it is.
func (d *Definition) UnmarshalJSON(b []byte) error {
	*d = append((*d)[:0], b...)
	return nil
}

package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// AddServer returns the configuration data with entry (a server's mapping
// in the list form, name first) added to its servers, the rest of the
// file kept as it is: the entry's text is inserted after the last item
// of a block `servers:` list, or a `servers:` list is appended when the
// file has none. A file whose servers are written another way (a flow
// list, the mcpServers or VS Code mapping) is re-encoded from its parsed
// form, which keeps its comments but not its layout. A JSON file is not
// rewritten as YAML: that is an error.
func AddServer(data []byte, entry *yaml.Node) ([]byte, error) {
	out, err := addServer(data, entry)
	if err == nil && bytes.Contains(data, []byte("\r\n")) {
		// A file with Windows line ends keeps them.
		out = bytes.ReplaceAll(bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
	}
	return out, err
}

func addServer(data []byte, entry *yaml.Node) ([]byte, error) {
	var doc yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc)
	if errors.Is(err, io.EOF) {
		return appendList(data, entry)
	}
	if err != nil {
		return nil, fmt.Errorf("the configuration does not parse: %w", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the configuration is not a mapping of settings")
	}
	top := doc.Content[0]
	if top.Style&yaml.FlowStyle != 0 {
		return nil, errors.New("the configuration is written as JSON; add writes YAML: add the entry by hand, or keep the servers in a YAML file")
	}
	var servers, mcpServers *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		switch top.Content[i].Value {
		case "servers":
			servers = top.Content[i+1]
		case "mcpServers":
			mcpServers = top.Content[i+1]
		}
	}
	switch {
	case servers == nil && mcpServers == nil:
		return appendList(data, entry)
	case servers != nil && servers.Kind == yaml.SequenceNode && servers.Style&yaml.FlowStyle == 0 && len(servers.Content) > 0:
		return insertItem(data, top, servers, entry)
	case servers != nil && servers.Kind == yaml.SequenceNode:
		servers.Style = 0
		servers.Content = append(servers.Content, entry)
	case servers != nil && servers.Kind == yaml.ScalarNode && servers.Tag == "!!null":
		*servers = yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{entry}}
	case servers != nil && servers.Kind == yaml.MappingNode:
		addToMap(servers, entry)
	case mcpServers != nil && mcpServers.Kind == yaml.MappingNode:
		addToMap(mcpServers, entry)
	default:
		return nil, errors.New("the configuration's servers are neither a list nor a mapping")
	}
	return encode(&doc)
}

// addToMap adds entry to a mapping of servers by name, without its name key.
func addToMap(m, entry *yaml.Node) {
	value := *entry
	value.Content = nil
	var name string
	for i := 0; i+1 < len(entry.Content); i += 2 {
		if entry.Content[i].Value == "name" {
			name = entry.Content[i+1].Value
			continue
		}
		value.Content = append(value.Content, entry.Content[i], entry.Content[i+1])
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, HeadComment: value.HeadComment}
	value.HeadComment = ""
	m.Style = 0
	m.Content = append(m.Content, key, &value)
}

func encode(n *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// itemText is entry as one item of a block list, each line indented by
// indent spaces.
func itemText(entry *yaml.Node, indent int) ([]byte, error) {
	b, err := encode(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{entry}})
	if err != nil {
		return nil, err
	}
	pad := strings.Repeat(" ", indent)
	var out bytes.Buffer
	for line := range strings.Lines(string(b)) {
		if strings.TrimSpace(line) != "" {
			out.WriteString(pad)
		}
		out.WriteString(line)
	}
	return out.Bytes(), nil
}

// appendList appends a servers list holding entry to data.
func appendList(data []byte, entry *yaml.Node) ([]byte, error) {
	item, err := itemText(entry, 2)
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(data)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, "servers:\n"...)
	return append(out, item...), nil
}

// insertItem inserts entry's text after the last item of the block list
// servers, at the items' indentation: before the next top-level key (and
// the blank lines and comments that lead up to it), or at the end.
func insertItem(data []byte, top, servers, entry *yaml.Node) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	first := servers.Content[0]
	dash := strings.Index(lines[first.Line-1], "-")
	if dash < 0 || dash >= first.Column-1 {
		return nil, errors.New("cannot find the servers list's items in the file")
	}
	end := len(lines) // index of the first line after the list
	for i := 0; i+1 < len(top.Content); i += 2 {
		if k := top.Content[i]; k.Line > first.Line && k.Line-1 < end {
			end = k.Line - 1
		}
	}
	for end > first.Line {
		l := lines[end-1]
		t := strings.TrimSpace(l)
		if t == "" || (strings.HasPrefix(t, "#") && !strings.HasPrefix(l, " ")) {
			end--
			continue
		}
		break
	}
	item, err := itemText(entry, dash)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, l := range lines[:end] {
		out.WriteString(l)
	}
	if end > 0 && !strings.HasSuffix(lines[end-1], "\n") {
		out.WriteByte('\n')
	}
	out.Write(item)
	for _, l := range lines[end:] {
		out.WriteString(l)
	}
	return out.Bytes(), nil
}

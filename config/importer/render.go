package importer

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
	"gopkg.in/yaml.v3"
)

// YAML renders the result as a gateway configuration: one `servers:` list
// entry per imported server, each with a comment naming the file and key it
// came from and what could not be carried over.
func (r *Result) YAML() []byte {
	var head []string
	head = append(head, "mcp-gateway configuration imported from "+r.Client.Title+" by `mcp-gateway import`.")
	for _, f := range r.Files {
		head = append(head, "read: "+f)
	}
	for _, s := range r.Skipped {
		head = append(head, fmt.Sprintf("not imported: %s.%s: %s", s.Entry.Source, s.Entry.Key, s.Why))
	}
	list := &yaml.Node{Kind: yaml.SequenceNode}
	for _, e := range r.Entries {
		list.Content = append(list.Content, entryNode(e))
	}
	key := str("servers")
	key.HeadComment = strings.Join(head, "\n")
	if len(r.Entries) == 0 {
		list.Style = yaml.FlowStyle
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{key, list}}}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		panic(err) // nodes of plain strings always encode
	}
	enc.Close()
	return buf.Bytes()
}

// entryNode is one server's mapping, its comment first.
func entryNode(e Entry) *yaml.Node {
	s := e.Server
	s.Name = e.Name
	m := ServerNode(s)
	comment := []string{"from " + e.Source.String() + "." + quoteKey(e.Key)}
	comment = append(comment, e.Notes...)
	m.HeadComment = strings.Join(comment, "\n")
	return m
}

// ServerNode is a server's entry as the list form of servers: writes it,
// name first, with the keys a written entry needs (import's and add's).
func ServerNode(s config.Server) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) { m.Content = append(m.Content, str(k), v) }
	add("name", str(s.Name))
	if s.Command != "" {
		add("command", str(s.Command))
	}
	if s.Args != nil {
		add("args", flowSeq(s.Args))
	}
	if len(s.Env) > 0 {
		add("env", strMap(s.Env))
	}
	if s.Cwd != "" {
		add("cwd", str(s.Cwd))
	}
	if s.URL != "" {
		add("url", str(s.URL))
	}
	if s.Transport != "" {
		add("type", str(s.Transport))
	}
	if len(s.Headers) > 0 {
		add("headers", strMap(s.Headers))
	}
	if o := oauthNode(s.OAuth); o != nil {
		add("oauth", o)
	}
	if s.TimeoutMS > 0 {
		add("timeout_ms", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(s.TimeoutMS)})
	}
	if s.Trust != "" {
		add("trust", str(s.Trust))
	}
	if !s.Enabled {
		add("enabled", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false"})
	}
	if len(s.Tools.Include) > 0 || len(s.Tools.Exclude) > 0 {
		t := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range []string{"include", "exclude"} {
			globs := s.Tools.Include
			if k == "exclude" {
				globs = s.Tools.Exclude
			}
			if len(globs) == 0 {
				continue
			}
			t.Content = append(t.Content, str(k), flowSeq(globs))
		}
		add("tools", t)
	}
	if sb := s.Sandbox; sb.Mode != "" {
		n := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("mode"), str(sb.Mode)}}
		if len(sb.Read) > 0 {
			n.Content = append(n.Content, str("read"), flowSeq(sb.Read))
		}
		if len(sb.Write) > 0 {
			n.Content = append(n.Content, str("write"), flowSeq(sb.Write))
		}
		add("sandbox", n)
		if len(sb.Read) > 0 || len(sb.Write) > 0 {
			m.Content[len(m.Content)-2].HeadComment = "the paths in its args and env, read and write: import cannot tell which it writes"
		}
	}
	if s.From != "" {
		add("from", str(s.From))
	}
	if s.FileSHA256 != "" {
		add("file_sha256", str(s.FileSHA256))
	}
	return m
}

// oauthNode is the server's oauth mapping, or nil when it has none.
func oauthNode(o config.OAuth) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, kv := range [][2]string{{"client_id", o.ClientID}, {"client_secret", o.ClientSecret}, {"client_metadata_url", o.ClientMetadataURL}, {"redirect_uri", o.RedirectURI}} {
		if kv[1] != "" {
			m.Content = append(m.Content, str(kv[0]), str(kv[1]))
		}
	}
	if len(o.Scopes) > 0 {
		m.Content = append(m.Content, str("scopes"), flowSeq(o.Scopes))
	}
	if len(m.Content) == 0 {
		return nil
	}
	return m
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// flowSeq is a list of strings on one line: [a, b].
func flowSeq(ss []string) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range ss {
		seq.Content = append(seq.Content, str(s))
	}
	return seq
}

func strMap(m map[string]string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		n.Content = append(n.Content, str(k), str(m[k]))
	}
	return n
}

func quoteKey(k string) string { return dotted([]string{k}) }

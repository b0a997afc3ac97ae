package tsdecl

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// argsOf is the declaration of one tool "t" with input schema in and
// output schema out, without the lines every declaration has.
func argsOf(in, out string) string {
	s := declareAll([]Tool{{Name: "t", InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out)}})
	s = strings.Replace(s, "interface Tools {\n", "", 1)
	return strings.TrimSuffix(s, "}\ndeclare var tools: Tools;\n")
}

// Each construct of JSON Schema, as the TypeScript a model reads.
func TestSchemaToTS(t *testing.T) {
	for _, tc := range []struct{ name, in, out, want string }{
		{"no schema", ``, ``, `  "t"(args: {}): Promise<string | object>;` + "\n"},
		{"no arguments", `{"type":"object","properties":{}}`, ``, `  "t"(args: {}): Promise<string | object>;` + "\n"},
		{"any object", `{"type":"object"}`, ``, `  "t"(args: { [key: string]: unknown }): Promise<string | object>;` + "\n"},
		{"required and optional",
			`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"},"c":{"type":"boolean"}},"required":["b","c"]}`, ``,
			`  "t"(args: { b: string; a?: number; c: boolean }): Promise<string | object>;` + "\n"},
		{"arrays and tuples",
			`{"type":"object","properties":{"a":{"type":"array","items":{"type":["string","null"]}},"b":{"type":"array"},"c":{"prefixItems":[{"type":"number"},{"const":"x"}],"items":false},"d":{"items":[{"type":"string"}]}}}`, ``,
			`  "t"(args: {
    a?: (string | null)[];
    b?: unknown[];
    c?: [number, "x"];
    d?: [string, ...unknown[]];
  }): Promise<string | object>;` + "\n"},
		{"enum and const",
			`{"type":"object","properties":{"e":{"type":"string","enum":["a","b\"c"]},"n":{"enum":[1,-2.5e3,null,true]},"k":{"const":{"x":[1,"y"]}},"z":{"const":null}},"required":["e","n","k","z"]}`, ``,
			`  "t"(args: { e: "a" | "b\"c"; n: 1 | -2.5e3 | null | true; k: { x: [1, "y"] }; z: null }): Promise<string | object>;` + "\n"},
		{"negative literal in an array",
			`{"type":"array","items":{"const":-1}}`, ``,
			`  "t"(args: (-1)[]): Promise<string | object>;` + "\n"},
		{"unions and intersections",
			`{"type":"object","properties":{"u":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"string"}]},"o":{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"array","items":{"type":"number"}}]},"i":{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"number"}}},{}]},"m":{"type":"array","items":{"anyOf":[{"type":"string"},{"allOf":[{"properties":{"x":{}}},{"properties":{"y":{}}}]}]}}}}`, ``,
			`  "t"(args: {
    u?: string | number;
    o?: { a: string } | number[];
    i?: { a?: string } & { b?: number };
    m?: (string | { x?: unknown } & { y?: unknown })[];
  }): Promise<string | object>;` + "\n"},
		{"a union with unknown is unknown",
			`{"anyOf":[{"type":"string"},{}]}`, ``,
			`  "t"(args: unknown): Promise<string | object>;` + "\n"},
		{"index signatures",
			`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"number"}},"p":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":{"type":"boolean"}},"q":{"patternProperties":{"^x":{"type":"string"},"^y":{"type":"number"}}},"closed":{"type":"object","additionalProperties":false}}}`, ``,
			`  "t"(args: {
    m?: { [key: string]: number };
    p?: { a: string } & { [key: string]: boolean };
    q?: { [key: string]: string | number };
    closed?: {};
  }): Promise<string | object>;` + "\n"},
		{"nullable and type lists",
			`{"type":"object","properties":{"a":{"type":"string","nullable":true},"b":{"type":["integer","null","string"]},"c":{"type":"string","enum":["x"],"nullable":true}}}`, ``,
			`  "t"(args: { a?: string | null; b?: number | null | string; c?: "x" | null }): Promise<string | object>;` + "\n"},
		{"quoted names",
			`{"type":"object","properties":{"a-b":{"type":"string"},"$ok_1":{"type":"string"},"1x":{"type":"string"},"":{"type":"string"},"é":{"type":"string"},"\u2028":{"type":"string"}}}`, ``,
			`  "t"(args: {
    "a-b"?: string;
    $ok_1?: string;
    "1x"?: string;
    ""?: string;
    "é"?: string;
    "\u2028"?: string;
  }): Promise<string | object>;` + "\n"},
		{"descriptions",
			`{"type":"object","properties":{"a":{"type":"object","description":"the a","properties":{"x":{"type":"string","description":"ends */ here\r\nsecond\u0007 line"}}}}}`, ``,
			`  /** @param args.a the a */
  "t"(args: {
    a?: {
      /**
       * ends *\/ here
       * second  line
       */
      x?: string;
    };
  }): Promise<string | object>;` + "\n"},
		{"unknown",
			`{"type":"object","properties":{"a":{"type":"bignum"},"b":true,"c":false,"d":{"not":{"type":"string"}},"e":{"$ref":"https://example.com/s.json"},"f":{"$ref":"#/nowhere"},"g":7}}`, ``,
			`  "t"(args: {
    a?: unknown;
    b?: unknown;
    c?: never;
    d?: unknown;
    e?: unknown;
    f?: unknown;
    g?: unknown;
  }): Promise<string | object>;` + "\n"},
		{"output schema",
			`{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}`, `{"type":"object","properties":{"ok":{"type":"boolean","description":"Done."}},"required":["ok"]}`,
			`  "t"(args: { n: string }): Promise<{
    /** Done. */
    ok: boolean;
  }>;` + "\n"},
		{"the result's members described as the arguments' are not described again",
			`{"type":"object","properties":{"a":{"type":"string","description":"The a."},"o":{"type":"object","properties":{"b":{"type":"number","description":"The b."}}}}}`,
			`{"type":"object","properties":{"a":{"type":"string","description":"The a."},"b":{"type":"number","description":"The b."},"c":{"type":"number","description":"The c."},"o":{"type":"string","description":"Another o."}}}`,
			`  /** @param args.a The a. */
  "t"(args: {
    a?: string;
    o?: {
      /** The b. */
      b?: number;
    };
  }): Promise<{
    a?: string;
    b?: number;
    /** The c. */
    c?: number;
    /** Another o. */
    o?: string;
  }>;` + "\n"},
		{"defs by name",
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/Node"},"b":{"$ref":"#/definitions/Leaf"}},"$defs":{"Node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/Node"}},"leaf":{"$ref":"#/definitions/Leaf"}}}},"definitions":{"Leaf":{"type":"string"}}}`, ``,
			"type Node = { kids?: Node[]; leaf?: Leaf };\ntype Leaf = string;\n" +
				`  "t"(args: { a?: Node; b?: Leaf }): Promise<string | object>;` + "\n"},
		{"a def circular through a union is expanded",
			`{"$ref":"#/$defs/A","$defs":{"A":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/B"}]},"B":{"anyOf":[{"type":"number"},{"$ref":"#/$defs/A"},{"type":"array","items":{"$ref":"#/$defs/A"}}]}}}`, ``,
			"type A = string | number | A[];\n" +
				`  "t"(args: A): Promise<string | object>;` + "\n"},
		{"a def that is itself is unknown",
			`{"$ref":"#/$defs/A","$defs":{"A":{"$ref":"#/$defs/A"}}}`, ``,
			"type A = unknown;\n" +
				`  "t"(args: A): Promise<string | object>;` + "\n"},
		{"other pointers are expanded, once",
			`{"type":"object","properties":{"a":{"type":"object","properties":{"s":{"type":"string"},"me":{"$ref":"#/properties/a"}}},"b":{"$ref":"#/properties/a/properties/s"},"c":{"$ref":"#/properties/a%20b"},"a b":{"const":1}}}`, ``,
			`  "t"(args: {
    a?: { s?: string; me?: { s?: string; me?: unknown } };
    b?: string;
    c?: 1;
    "a b"?: 1;
  }): Promise<string | object>;` + "\n"},
		{"def names that are not identifiers",
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/a-b.c"},"b":{"$ref":"#/$defs/string"},"c":{"$ref":"#/$defs/9"},"d":{"$ref":"#/$defs/a_b_c"},"e":{"$ref":"#/$defs/Error"}},"$defs":{"a-b.c":{"type":"string"},"string":{"type":"number"},"9":{"type":"boolean"},"a_b_c":{"type":"null"},"Error":{"const":"e"}}}`, ``,
			"type a_b_c = string;\ntype _string = number;\ntype _9 = boolean;\ntype a_b_c2 = null;\ntype _Error = \"e\";\n" +
				`  "t"(args: { a?: a_b_c; b?: _string; c?: _9; d?: a_b_c2; e?: _Error }): Promise<string | object>;` + "\n"},
		{"not JSON", `{"type":`, ``, `  "t"(args: unknown): Promise<string | object>;` + "\n"},
	} {
		if got := argsOf(tc.in, tc.out); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if errs := parseTS(declareAll([]Tool{{Name: "t", InputSchema: json.RawMessage(tc.in), OutputSchema: json.RawMessage(tc.out)}})); len(errs) > 0 {
			t.Errorf("%s: not TypeScript: %s", tc.name, strings.Join(errs, "\n"))
		}
	}
}

// toolset is one of the real servers' tool lists the gateway's tests
// use (gateway/testdata/toolsets), as tools named SERVER.TOOL.
func toolset(t testing.TB, server string) []Tool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "toolsets", server+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Tools []struct {
			Name, Description         string
			InputSchema, OutputSchema json.RawMessage
		}
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	var tools []Tool
	for _, x := range set.Tools {
		tools = append(tools, Tool{Name: server + "." + x.Name, Description: x.Description, InputSchema: x.InputSchema, OutputSchema: x.OutputSchema})
	}
	return tools
}

func pick(t *testing.T, tools []Tool, name string) Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return Tool{}
}

// The declarations of the npm servers the tests run, as a model reads
// them: whole for a few, and for every tool of the 15 captured servers
// TypeScript that parses, smaller than the JSON it comes from.
func TestRealSchemas(t *testing.T) {
	memory, everything, filesystem := toolset(t, "memory"), toolset(t, "everything"), toolset(t, "filesystem")
	for _, tc := range []struct {
		tool Tool
		want string
	}{
		{pick(t, memory, "memory.create_relations"), `interface Tools {
  /** Create multiple new relations between entities in the knowledge graph. Relations should be in active voice */
  "memory.create_relations"(args: {
    relations: {
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    }[];
  }): Promise<{ relations: { from: string; to: string; relationType: string }[] }>;
}
declare var tools: Tools;
`},
		{pick(t, everything, "everything.get-structured-content"), `interface Tools {
  /**
   * Returns structured content along with an output schema for client data validation
   * @param args.location Choose city
   */
  "everything.get-structured-content"(args: { location: "New York" | "Chicago" | "Los Angeles" }): Promise<{
    /** Temperature in celsius */
    temperature: number;
    /** Weather conditions description */
    conditions: string;
    /** Humidity percentage */
    humidity: number;
  }>;
}
declare var tools: Tools;
`},
		{pick(t, filesystem, "filesystem.list_directory"), `interface Tools {
  /** Get a detailed listing of all files and directories in a specified path. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is essential for understanding directory structure and finding specific files within a directory. Only works within allowed directories. */
  "filesystem.list_directory"(args: { path: string }): Promise<{ content: string }>;
}
declare var tools: Tools;
`},
	} {
		if got := declareAll([]Tool{tc.tool}); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.tool.Name, got, tc.want)
		}
	}

	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "toolsets", "*.json"))
	if err != nil || len(files) < 15 {
		t.Fatalf("toolsets: %v %v", files, err)
	}
	for _, f := range files {
		server := strings.TrimSuffix(filepath.Base(f), ".json")
		tools := toolset(t, server)
		got := declareAll(tools)
		if errs := parseTS(got); len(errs) > 0 {
			t.Errorf("%s: not TypeScript: %s\n%s", server, strings.Join(errs, "\n"), got)
		}
		for _, tool := range tools {
			if !strings.Contains(got, "\n  "+quote(tool.Name)+"(args: ") {
				t.Errorf("%s: %s not declared", server, tool.Name)
			}
		}
		if strings.Contains(got, "\x00") {
			t.Errorf("%s: a placeholder left: %q", server, got)
		}
		var schemas int
		for _, tool := range tools {
			schemas += len(tool.InputSchema) + len(tool.OutputSchema) + len(tool.Description)
		}
		if len(got)-len(declareAll(nil)) >= schemas {
			t.Errorf("%s: %d bytes of TypeScript from %d of schemas and descriptions", server, len(got), schemas)
		}
	}
}

// Tools that share their defs (notion's 22 tools use the same
// richTextRequest) declare each once, by its name; a def of the same name
// and another type gets a number, as does a def that refers to it; the
// same tool declared twice is one set of aliases.
func TestSharedDefs(t *testing.T) {
	notion := declareAll(toolset(t, "notion"))
	for _, def := range []string{"richTextRequest", "pageIdParentRequest", "parentRequest"} {
		if n := strings.Count("\n"+notion, "\ntype "+def+" = "); n != 1 {
			t.Errorf("%s declared %d times:\n%s", def, n, notion)
		}
	}
	if strings.Contains(notion, "richTextRequest2") {
		t.Errorf("richTextRequest numbered:\n%s", notion)
	}

	tool := func(name, defs string) Tool {
		return Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":` + defs + `}`)}
	}
	one := tool("one", `{"A":{"type":"array","items":{"$ref":"#/$defs/B"}},"B":{"type":"string"}}`)
	other := tool("other", `{"A":{"type":"array","items":{"$ref":"#/$defs/B"}},"B":{"type":"number"}}`)
	got := declareAll([]Tool{one, other, one})
	want := `type A = B[];
type B = string;
type A2 = B2[];
type B2 = number;
interface Tools {
  "one"(args: { a?: A }): Promise<string | object>;
  "other"(args: { a?: A2 }): Promise<string | object>;
  "one"(args: { a?: A }): Promise<string | object>;
}
declare var tools: Tools;
`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if errs := parseTS(got); len(errs) > 0 {
		t.Error(strings.Join(errs, "\n"))
	}
}

// maxOut bounds one tool's declaration, whatever its schemas.
const maxOut = 256 << 10

// Hostile schemas: each is declared quickly, within maxOut, as
// TypeScript.
func TestHostileSchemas(t *testing.T) {
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 100000) + `{}` + strings.Repeat(`}}`, 100000)
	deepArrays := strings.Repeat(`[`, 1000000) + strings.Repeat(`]`, 1000000)
	var wide, enum, doubling strings.Builder
	wide.WriteString(`{"type":"object","properties":{`)
	for i := range 100000 {
		fmt.Fprintf(&wide, `"p%d":{"type":"string","description":"%s"},`, i, strings.Repeat("d", 200))
	}
	wide.WriteString(`"last":{}}}`)
	enum.WriteString(`{"enum":[`)
	for i := range 100000 {
		fmt.Fprintf(&enum, `"%d",`, i)
	}
	enum.WriteString(`"x"]}`)
	// Each def is a union of the next twice, at the top of an alias,
	// where refs are expanded: 2^60 paths.
	doubling.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range 60 {
		fmt.Fprintf(&doubling, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"allOf":[{"$ref":"#/$defs/d%d"},{"type":"object"}]}]},`, i, i+1, i+1)
	}
	doubling.WriteString(`"d60":{"type":"string"}}}`)
	// Pointers other than defs are expanded where used: each property
	// refers to the previous twice.
	var pointers strings.Builder
	pointers.WriteString(`{"type":"object","properties":{"p0":{"type":"string"}`)
	for i := 1; i < 60; i++ {
		fmt.Fprintf(&pointers, `,"p%d":{"type":"object","properties":{"x":{"$ref":"#/properties/p%d"},"y":{"$ref":"#/properties/p%d"}}}`, i, i-1, i-1)
	}
	pointers.WriteString(`}}`)
	for name, schema := range map[string]string{
		"deep":        deep,
		"deep arrays": deepArrays,
		"wide":        wide.String(),
		"enum":        enum.String(),
		"doubling":    doubling.String(),
		"pointers":    pointers.String(),
		"long name":   `{"type":"object","properties":{"` + strings.Repeat("n", 1<<20) + `":{"type":"string"}}}`,
		"long text":   `{"type":"object","description":"` + strings.Repeat("é*/", 1<<20) + `","properties":{"a":{"const":"` + strings.Repeat("c", 1<<20) + `"}}}`,
	} {
		tool := Tool{Name: "t", Description: strings.Repeat("x", 1<<20), InputSchema: json.RawMessage(schema), OutputSchema: json.RawMessage(schema)}
		got := declareAll([]Tool{tool})
		if len(got) > maxOut {
			t.Errorf("%s: %d bytes", name, len(got))
		}
		if errs := parseTS(got); len(errs) > 0 {
			t.Errorf("%s: not TypeScript: %s", name, strings.Join(errs, "\n"))
		}
		t.Logf("%s: %d bytes", name, len(got))
	}
}

// declareAll is the declarations of all of tools.
func declareAll(tools []Tool) string {
	s, _ := Declare(tools, 0)
	return s
}

// Declare stops before the tool that would take it past max, declaring
// the aliases of the tools it declared only; it declares one tool
// whatever its size.
func TestDeclareWithin(t *testing.T) {
	notion := toolset(t, "notion")
	all := declareAll(notion)
	for _, max := range []int{1, 2000, 6000, len(all) - 1, len(all)} {
		got, n := Declare(notion, max)
		if n < 1 || n > len(notion) || n > 1 && len(got) > max || (max >= len(all)) != (n == len(notion)) {
			t.Errorf("max %d: %d tools in %d bytes (all: %d in %d)", max, n, len(got), len(notion), len(all))
		}
		if want := declareAll(notion[:n]); got != want {
			t.Errorf("max %d: the first %d tools declared as\n%s\nwant\n%s", max, n, got, want)
		}
	}
}

// BenchmarkDeclare declares every tool of the 15 captured npm servers
// (217 tools), one server a Declare, as find_tools answers.
func BenchmarkDeclare(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "toolsets", "*.json"))
	if err != nil || len(files) == 0 {
		b.Fatal(files, err)
	}
	var sets [][]Tool
	for _, f := range files {
		sets = append(sets, toolset(b, strings.TrimSuffix(filepath.Base(f), ".json")))
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, tools := range sets {
			Declare(tools, 0)
		}
	}
}

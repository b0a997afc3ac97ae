package answer

import (
	"encoding/json"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool descriptions: a fixed contract, verbatim; prompts and clients depend on these texts.
const (
	descAnswer         = "Search the web when needed and provide balanced, well-sourced answers. This is the standard general-purpose tool."
	descAnswerDetailed = "Perform comprehensive analysis with thorough research and detailed explanations. Best for complex questions requiring deep investigation."
	descAnswerQuick    = "Provide fast, concise answers optimized for speed. Best for simple lookups or urgent questions."
)

// Input schemas: a fixed contract, verbatim (key order preserved).
const (
	schemaFull  = `{"type":"object","properties":{"query":{"type":"string"},"recency_days":{"type":"number"},"max_results":{"type":"number"},"domains":{"type":"array","items":{"type":"string"}}},"required":["query"]}`
	schemaQuick = `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`
)

// resultSchema is the JSON Schema of Result, declared as every answer tool's
// outputSchema.
const resultSchema = `{"type":"object","properties":{"answer":{"type":"string"},"used_search":{"type":"boolean"},"citations":{"type":"array","items":{"type":"object","properties":{"url":{"type":"string"},"title":{"type":"string"},"published_at":{"type":"string"}},"required":["url","published_at"]}},"model":{"type":"string"}},"required":["answer","used_search","citations","model"]}`

// IsTool reports whether name is one of the answer tools.
func IsTool(name string) bool {
	switch name {
	case config.ProfileAnswer, config.ProfileAnswerDetailed, config.ProfileAnswerQuick:
		return true
	}
	return false
}

// Tools returns the three tool definitions exactly as the contract gives
// them (names, descriptions, input schemas), each with an outputSchema for
// Result. The schemas are json.RawMessage values with the contract's key order.
// Each call returns fresh values that the caller may modify.
func (s *Service) Tools() []*mcp.Tool {
	mk := func(name, desc, in string) *mcp.Tool {
		return &mcp.Tool{
			Name:         name,
			Description:  desc,
			InputSchema:  json.RawMessage(in),
			OutputSchema: json.RawMessage(resultSchema),
		}
	}
	return []*mcp.Tool{
		mk(config.ProfileAnswer, descAnswer, schemaFull),
		mk(config.ProfileAnswerDetailed, descAnswerDetailed, schemaFull),
		mk(config.ProfileAnswerQuick, descAnswerQuick, schemaQuick),
	}
}

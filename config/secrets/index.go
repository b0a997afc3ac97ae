package secrets

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/config/atomicfile"
)

// The keychain cannot list a service's accounts, so the store keeps their
// names (never a value) in secrets.json: {"backend":"keychain","names":[...]}.

type index struct {
	Backend string   `json:"backend"`
	Names   []string `json:"names"`
}

// indexRead returns the names of the keychain's secrets.
func (s *Store) indexRead() (map[string]bool, error) {
	data, err := os.ReadFile(s.path(indexName))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	var ix index
	if err := json.Unmarshal(data, &ix); err != nil {
		return nil, fmt.Errorf("secrets: %s: %w", s.path(indexName), err)
	}
	names := map[string]bool{}
	for _, n := range ix.Names {
		names[n] = true
	}
	return names, nil
}

// indexChange changes the names with fn and writes them, with the lock
// held (change).
func (s *Store) indexChange(fn func(map[string]bool)) error {
	names, err := s.indexRead()
	if err != nil {
		return err
	}
	fn(names)
	data, _ := json.MarshalIndent(index{Backend: Keychain, Names: sortedKeys(names)}, "", "  ") // plain data
	if err := atomicfile.WriteFile(s.path(indexName), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

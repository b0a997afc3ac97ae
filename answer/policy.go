package answer

import (
	_ "embed"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
)

//go:embed policy_builtin.md
var builtinPolicyText string

// Policy source and merge values of config.SystemPolicy.
const (
	policySourceBuiltin = "builtin"
	PolicySourceFile    = "file"
	MergeReplace        = "replace"
	MergePrepend        = "prepend"
	MergeAppend         = "append"
)

// tokyo is Asia/Tokyo: UTC+9 all year (Japan has no daylight saving time),
// fixed so that no time zone database is needed.
var tokyo = time.FixedZone("Asia/Tokyo", 9*60*60)

// tokyoDate formats t as YYYY-MM-DD in Asia/Tokyo.
func tokyoDate(t time.Time) string { return t.In(tokyo).Format(time.DateOnly) }

// BuiltinPolicy returns the built-in system policy: when to search, ISO
// dates, relative dates made absolute in Asia/Tokyo, the user's language, and
// a dated Sources list. It ends with today's date in Asia/Tokyo, taken from
// now, so that the model can make relative dates absolute.
func BuiltinPolicy(now time.Time) string {
	return strings.TrimRight(builtinPolicyText, "\n") +
		fmt.Sprintf("\n\nToday's date (Asia/Tokyo): %s.", tokyoDate(now))
}

// instructions returns the Responses `instructions` for one call and a short
// description of where they came from, for the debug log. The policy file is
// read on every call; when it cannot be used the reason is logged as a warning
// and the builtin text is used alone.
func (s *Service) instructions() (text, from string) {
	builtin := BuiltinPolicy(s.now())
	sp := s.opts.Config.Policy.System
	if sp.Source != PolicySourceFile {
		return builtin, policySourceBuiltin
	}
	merge := sp.Merge
	if merge == "" {
		merge = MergeReplace
	}
	file, err := s.readPolicyFile(sp.Path)
	if err != nil {
		s.log().Warn("policy file unusable, using the builtin policy", "path", sp.Path, "err", err)
		return builtin, policySourceBuiltin + " (policy file unusable)"
	}
	from = "file(" + merge + ")"
	switch merge {
	case MergePrepend:
		return file + "\n\n" + builtin, from
	case MergeAppend:
		return builtin + "\n\n" + file, from
	case MergeReplace:
		return file, from
	default:
		s.log().Warn("unknown policy.system.merge, using replace", "merge", merge)
		return file, "file(replace)"
	}
}

// maxPolicySize bounds a policy file: a system prompt, not a document.
const maxPolicySize = 1 << 20

// readPolicyFile reads the policy file at path ("~" expanded). An empty or
// whitespace-only file is an error: it would silently remove all guidance.
func (s *Service) readPolicyFile(path string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", fmt.Errorf("policy.system.path is empty")
	}
	p, err := s.expandHome(path)
	if err != nil {
		return "", err
	}
	b, err := config.ReadFile(p, maxPolicySize)
	if err != nil {
		return "", fmt.Errorf("read policy file %s: %w", p, err)
	}
	text := strings.TrimSpace(strings.TrimPrefix(string(b), "\ufeff"))
	if text == "" {
		return "", fmt.Errorf("policy file %s is empty", p)
	}
	return text, nil
}

// expandHome expands a leading "~" in path as config.ExpandHome does, with
// the home directory of Options.Home, else the user's.
func (s *Service) expandHome(path string) (string, error) {
	home := s.opts.Home
	if home == "" && strings.HasPrefix(path, "~") {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("expand %q: %w", path, err)
		}
		home = h
	}
	return config.ExpandHome(path, home), nil
}

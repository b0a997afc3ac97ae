package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestAuditFullDisk: on a full disk a call whose audit entry cannot be
// written fails (-32603, reason audit) rather than being answered
// unrecorded, and calls are recorded again once there is room (issue 32:
// 6 of 22 entries were lost while their calls were answered). A real full
// disk is a 64 KiB tmpfs filled to the last block, which needs root.
func TestAuditFullDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	os.Mkdir(disk, 0o700)
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("mounting a tmpfs needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(disk, syscall.MNT_DETACH) })
	auditLog := filepath.Join(disk, "audit.jsonl")
	if err := os.WriteFile(auditLog, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(disk, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for chunk := make([]byte, 4096); len(chunk) > 0; {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			chunk = chunk[:len(chunk)/2]
		}
	}
	f.Close()

	cfg := map[string]any{"gateway": map[string]any{"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "answer_tools": false,
		"audit": map[string]any{"path": auditLog}},
		"servers": []beServer{tb("calc")}}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(dir, "config.yaml")
	os.WriteFile(path, b, 0o600)
	s := startRaw(t, path, "audit-test")
	for range 3 {
		r := s.callTool("calc.echo", `{"text":"hi"}`)
		if r.Map()["error"] == nil {
			t.Fatalf("a call answered although its audit entry cannot be written: %s", r)
		}
		code, _, data := r.Error(t)
		if code != jsonrpc.CodeInternalError || data["reason"] != "audit" {
			t.Fatalf("the call's error: %s", r)
		}
	}
	os.Remove(filler)
	structuredContent(t, s.callTool("calc.echo", `{"text":"again"}`))
	entries, err := audit.Tail(auditLog, 10)
	if err != nil || len(entries) != 1 || entries[0].Tool != "calc.echo" || entries[0].Outcome != "ok" {
		t.Fatalf("entries %+v, %v: want the one answered call", entries, err)
	}
}

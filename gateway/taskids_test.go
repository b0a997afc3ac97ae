package gateway

import (
	"strings"
	"testing"
)

// A sealed task id says nothing of what it names, is the same for the same
// task, opens with the key it was sealed with in any process (a replica),
// and opens to nothing once altered.
func TestSealedTaskID(t *testing.T) {
	s := newSealer([]byte("shared key"))
	ref := taskRef{Server: "tasks", Task: "task-1", Who: "alice", Process: s.process}
	id := s.sealTask(ref)
	if !strings.HasPrefix(id, taskIDPrefix) || strings.Contains(id, "task-1") || strings.Contains(id, "alice") {
		t.Fatalf("id %q", id)
	}
	if again := s.sealTask(ref); again != id {
		t.Errorf("two seals of one task differ: %q, %q", id, again)
	}
	if other := s.sealTask(taskRef{Server: "tasks", Task: "task-2", Who: "alice"}); other == id {
		t.Errorf("two tasks have one id %q", id)
	}
	replica := newSealer([]byte("shared key"))
	if got, ok := replica.openTask(id); !ok || got != ref {
		t.Errorf("a replica opened %+v, %v; want %+v", got, ok, ref)
	}
	if _, ok := newSealer([]byte("other key")).openTask(id); ok {
		t.Error("opened with another key")
	}
	for _, bad := range []string{id[:len(id)-1] + "A", id + "A", taskIDPrefix, taskIDPrefix + "!!", "task-1", ""} {
		if bad == id {
			continue
		}
		if got, ok := s.openTask(bad); ok {
			t.Errorf("opened %q: %+v", bad, got)
		}
	}
}

// A front opens only the ids of its own caller's tasks, and refuses those
// of another process's child with the reason; the answer to an id it may
// not open is the one for an unknown task.
func TestTaskIDCaller(t *testing.T) {
	g := &Gateway{sealer: newSealer([]byte("k"))}
	alice, bob := &front{g: g}, &front{g: g}
	alice.gr.Store(&grant{identity: "alice"})
	bob.gr.Store(&grant{identity: "bob"})
	ref := taskRef{Server: "tasks", Task: "task-1", Who: "alice"}
	id := g.sealer.sealTask(ref)
	if got, err := alice.taskOf(id); err != nil || got != ref {
		t.Errorf("alice: %+v, %v", got, err)
	}
	if _, err := bob.taskOf(id); err == nil || !strings.Contains(err.Error(), "Task not found") {
		t.Errorf("bob opened alice's task: %v", err)
	}
	elsewhere := g.sealer.sealTask(taskRef{Server: "tasks", Task: "task-1", Who: "alice", Process: "another"})
	if _, err := alice.taskOf(elsewhere); err == nil || !strings.Contains(err.Error(), "another gateway process") {
		t.Errorf("another process's task: %v", err)
	}
}

package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// A task of the tasks extension (2026-07-28, SEP-2663) is named to the
// client by an id the gateway seals, as it seals a requestState
// (requeststate.go): the backend that owns the task, the backend's own id
// for it, who created it (the caller's principal, on the HTTP front with
// authentication), and, for a backend that is a child process of this
// gateway process, the process. A request of that era has no session, and
// may reach any replica: the id itself says where the task is, so no table
// is needed to find its owner, and no client can name a task it was not
// given — another backend's, or another caller's — by guessing, since an id
// the gateway did not seal opens to nothing. The seal is deterministic (its
// nonce is derived from what it seals), so a task always has the same id.

// taskIDPrefix starts every task id the gateway seals.
const taskIDPrefix = "mcpgwt1."

// taskRef is what a sealed task id names.
type taskRef struct {
	Server  string `json:"s"`
	Task    string `json:"t"`           // the backend's own id
	Who     string `json:"w,omitempty"` // the creator's principal key
	Process string `json:"p,omitempty"` // the gateway process whose child owns it
}

// errTaskReplica refuses a task of another replica's child process, which
// only that replica can reach. Any other id the client may not reach is
// answered as a backend answers an unknown one ("Task not found").
var errTaskReplica = errors.New("the task belongs to a server process of another gateway process (a replica, or this gateway before a restart): send the request to the replica that created it")

// sealTask returns the id the client knows ref's task by.
func (s *sealer) sealTask(ref taskRef) string {
	plain, _ := json.Marshal(ref)
	mac := hmac.New(sha256.New, s.nonceKey[:])
	mac.Write(plain)
	nonce := mac.Sum(nil)[:s.aead.NonceSize()]
	out := s.aead.Seal(append([]byte(nil), nonce...), nonce, plain, []byte(taskIDPrefix))
	return taskIDPrefix + base64.RawURLEncoding.EncodeToString(out)
}

// openTask returns what a task id names, if the gateway sealed it.
func (s *sealer) openTask(id string) (taskRef, bool) {
	var ref taskRef
	enc, ok := strings.CutPrefix(id, taskIDPrefix)
	if !ok {
		return ref, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return ref, false
	}
	plain, err := s.openSealed(raw, []byte(taskIDPrefix))
	if err != nil || json.Unmarshal(plain, &ref) != nil || ref.Server == "" || ref.Task == "" {
		return taskRef{}, false
	}
	return ref, true
}

// taskID is the id this front's client knows server's task own by.
func (f *front) taskID(server, own string) string {
	ref := taskRef{Server: server, Task: own, Who: f.grant().identity}
	if f.g.localServer(server) {
		ref.Process = f.g.sealer.process
	}
	return f.g.sealer.sealTask(ref)
}

// taskOf opens a task id this front's client sent: the task's server and
// the server's own id for it, if the client may reach it.
func (f *front) taskOf(id string) (taskRef, error) {
	ref, ok := f.g.sealer.openTask(id)
	who := f.grant().identity
	switch {
	case !ok || ref.Who != who:
		return taskRef{}, errInvalidParams("Task not found: " + id)
	case ref.Process != "" && ref.Process != f.g.sealer.process:
		return taskRef{}, errInvalidParams(errTaskReplica.Error())
	}
	return ref, nil
}

// localServer reports whether a configured server is a child process of
// this gateway process (not a url: server, which every replica reaches).
func (g *Gateway) localServer(name string) bool {
	for _, s := range *g.servers.Load() {
		if s.Name == name {
			return s.URL == ""
		}
	}
	return true
}

//go:build !windows

package sandbox

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestSocketEnv: a confined server's environment loses the variables
// that lead to the session's UNIX sockets unless a read or write path
// grants the socket; TCP addresses stay (the network's to govern).
func TestSocketEnv(t *testing.T) {
	env := []string{
		"PATH=/usr/bin", "XDG_RUNTIME_DIR=/run/user/1000",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
		"DBUS_SYSTEM_BUS_ADDRESS=unix:abstract=/tmp/dbus-x,guid=1",
		"SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1", "GPG_AGENT_INFO=/home/me/.gnupg/S.gpg-agent:0:1",
		"DISPLAY=:0", "WAYLAND_DISPLAY=wayland-0", "DOCKER_HOST=unix:///var/run/docker.sock",
		"TMUX=/tmp/tmux-1000/default,1,0", "PULSE_SERVER=unix:/run/user/1000/pulse/native",
	}
	_, got, _, err := Prepare(config.Sandbox{Mode: config.SandboxBestEffort}, Spec{Command: "sh", Env: env}, Host{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range socketVars {
		if v := lookup(got, name); v != "" {
			t.Errorf("%s=%s kept, its socket is not granted", name, v)
		}
	}
	if lookup(got, "PATH") != "/usr/bin" {
		t.Errorf("environment %q lost PATH", got)
	}

	remote := []string{"DISPLAY=otherhost:0", "DOCKER_HOST=tcp://10.0.0.1:2376", "DBUS_SESSION_BUS_ADDRESS=tcp:host=10.0.0.1,port=1"}
	if got := socketEnv(remote, remote, nil); !slices.Equal(got, remote) {
		t.Errorf("TCP addresses: %q, want kept", got)
	}
	granted := socketEnv(env, env, []string{"/tmp/ssh-XXXX/agent.1", "/run/user/1000"})
	for _, want := range []string{"SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", "WAYLAND_DISPLAY=/run/user/1000/wayland-0", "PULSE_SERVER=unix:/run/user/1000/pulse/native"} {
		if !slices.Contains(granted, want) {
			t.Errorf("granted: %q lacks %q", granted, want)
		}
	}
	for _, name := range []string{"DISPLAY", "DBUS_SYSTEM_BUS_ADDRESS", "DOCKER_HOST", "TMUX", "GPG_AGENT_INFO"} {
		if v := lookup(granted, name); v != "" {
			t.Errorf("granted: %s=%s kept, its socket is not granted", name, v)
		}
	}
}

// TestSocketsOpenWithoutNamespace: where the OS refuses the user
// namespace, status says the session's sockets stay reachable instead of
// what the mount namespace would have hidden.
func TestSocketsOpenWithoutNamespace(t *testing.T) {
	for name, refuse := range map[string]func(*Applied, error){"userns": (*Applied).WithoutUserNS, "netns": (*Applied).WithoutNetNS} {
		a := Applied{UserNS: true, NetNS: true, Gaps: []string{socketsHidden}}
		refuse(&a, errors.New("operation not permitted"))
		if slices.Contains(a.Gaps, socketsHidden) || !strings.HasPrefix(a.Gaps[0], "UNIX sockets by path: the session D-Bus (so the Secret Service)") {
			t.Errorf("%s refused: gaps %q", name, a.Gaps)
		}
	}
}

package main

import (
	"net"
	"os"
	"time"
)

// hostileTools are what a hostile server does (-hostile): read a file,
// write one, connect to an address.
var hostileTools = []string{"read_file", "write_file", "connect"}

// hostileCall runs one of hostileTools and answers its outcome: the
// file's text, "written", "connected", or an isError result with the OS's
// own error ("open /x: permission denied"). connect's network is tcp, or
// udp (a UDP connect only routes: it fails where no interface can reach
// the address).
func hostileCall(name, path, data, addr, network string) string {
	var out string
	var err error
	switch name {
	case "read_file":
		var b []byte
		b, err = os.ReadFile(path)
		out = string(b)
	case "write_file":
		err = os.WriteFile(path, []byte(data), 0o600)
		out = "written"
	case "connect":
		var c net.Conn
		if network == "" {
			network = "tcp"
		}
		c, err = net.DialTimeout(network, addr, 5*time.Second)
		if err == nil {
			c.Close()
		}
		out = "connected"
	}
	if err != nil {
		return `{"content":[{"type":"text","text":` + quote(err.Error()) + `}],"isError":true}`
	}
	return text(out)
}

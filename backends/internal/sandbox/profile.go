package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// Profile is the macOS sandbox profile (SBPL, as sandbox-exec -p takes it)
// for p, whose paths are already absolute and resolved (macOS matches the
// path a file is reached by after symbolic links: /private/tmp, not /tmp).
// It is a pure function of p, so that every OS tests it (testdata).
//
// Everything is denied unless allowed (deny default), as Chromium's and
// other mature profiles do: an allow-default profile would leave open
// what no list of denials foresees (Mach services such as the keychain's
// or the pasteboard's, other processes' arguments through sysctl,
// signals to the gateway). What a Node or Python server needs beyond its
// files is allowed by name: forking and executing (the profile is
// inherited), signals and process information within the sandbox, the
// Mach services that look up users and log, the sysctls runtimes read to
// size themselves, POSIX semaphores and shared memory (Python's
// multiprocessing), and UNIX socket pairs (Node's pipes to children).
// File metadata (stat, realpath) is allowed everywhere, as Landlock does
// on Linux: a server can learn that a path exists, not read it.
//
// Files: Read is readable, Write readable and writable, Devices readable
// and writable; Deny neither, over every allow (the last matching rule
// wins). Network: "" allows all; "none" nothing; "ports" only TCP to
// those ports of localhost (the egress proxy).
func Profile(p Plan) (string, error) {
	var b strings.Builder
	b.WriteString(profileBase)
	var bad error
	paths := func(op, filter string, list []string) {
		var lines []string
		for _, path := range list {
			q, err := sbplString(path)
			if err != nil {
				bad = err
				return
			}
			line := fmt.Sprintf("  (%s %s)\n", filter, q)
			if !slices.Contains(lines, line) {
				lines = append(lines, line)
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "(%s\n%s)\n", op, strings.Join(lines, ""))
		}
	}
	if p.FS {
		b.WriteString("\n; files: the system, the runtime, read\n")
		paths("allow file-read*", "subpath", p.Read)
		b.WriteString("; its state directory and write\n")
		paths("allow file-read* file-write*", "subpath", p.Write)
		b.WriteString("; devices\n")
		paths("allow file-read* file-write* file-ioctl", "literal", p.Devices)
	} else {
		b.WriteString("\n; files: not confined\n(allow file-read* file-write*)\n")
	}
	b.WriteString("\n; network\n")
	switch p.Net {
	case "":
		b.WriteString(profileNetAll)
	case "none":
		b.WriteString("; none: every socket operation stays denied\n")
	case "ports":
		for _, port := range p.Ports {
			fmt.Fprintf(&b, "(allow network-outbound (remote ip \"localhost:%d\"))\n", port)
		}
	default:
		return "", fmt.Errorf("sandbox: network %q: not one the profile knows", p.Net)
	}
	if len(p.Deny) > 0 {
		b.WriteString("\n; never: the gateway's own files\n")
		paths("deny file-read* file-write*", "subpath", p.Deny)
	}
	if bad != nil {
		return "", bad
	}
	return b.String(), nil
}

// sbplString is s as an SBPL (Scheme) string literal: in double quotes,
// with `"` and `\` escaped. A control character is refused: a path never
// needs one, and SBPL's reader has no portable escape for most of them.
func sbplString(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			return "", fmt.Errorf("sandbox: path %q: a control character cannot be written in a sandbox profile", s)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// profileBase is what every server may do beyond files and network.
const profileBase = `(version 1)
(deny default)

; processes: its own, and the programs they run (which inherit this profile)
(allow process-fork process-exec)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
; the host's processor information (libuv's os.cpus, V8's thread pool)
(allow mach-host*)

; users and groups (getpwuid), logging, notifications, preferences
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent"))
(allow user-preference-read)

; what runtimes read of the system to size themselves
(allow sysctl-read
  (sysctl-name-prefix "hw.")
  (sysctl-name-prefix "machdep.cpu.")
  (sysctl-name-prefix "kern.proc.pid.")
  (sysctl-name "kern.argmax")
  (sysctl-name "kern.hostname")
  (sysctl-name "kern.maxfiles")
  (sysctl-name "kern.maxfilesperproc")
  (sysctl-name "kern.maxproc")
  (sysctl-name "kern.ngroups")
  (sysctl-name "kern.osproductversion")
  (sysctl-name "kern.osrelease")
  (sysctl-name "kern.ostype")
  (sysctl-name "kern.osvariant_status")
  (sysctl-name "kern.osversion")
  (sysctl-name "kern.secure_kernel")
  (sysctl-name "kern.tcsm_available")
  (sysctl-name "kern.tcsm_enable")
  (sysctl-name "kern.usrstack64")
  (sysctl-name "kern.version")
  (sysctl-name "sysctl.proc_cputype")
  (sysctl-name "vm.loadavg")
  (sysctl-name "vm.pagesize"))
; V8 sets its own thread's cache mode; Java reads its CPU type this way
(allow sysctl-write
  (sysctl-name "kern.tcsm_enable")
  (sysctl-name "kern.grade_cputype"))

; Python's multiprocessing; Node's pipes to its children (socketpair)
(allow ipc-posix-sem ipc-posix-shm)
(allow system-socket (socket-domain AF_UNIX))

; stat and realpath anywhere: metadata, not contents
(allow file-read-metadata)
; the symbolic links at the root (/tmp, /var, /etc point into /private)
(allow file-read* (literal "/") (literal "/tmp") (literal "/var") (literal "/etc"))
`

// profileNetAll is network: all. DNS goes through mDNSResponder (a UNIX
// socket, allowed by network*) and the system's network configuration;
// TLS clients that use the system's trust store ask trustd.
const profileNetAll = `(allow network*)
(allow system-socket)
(allow mach-lookup
  (global-name "com.apple.dnssd.service")
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.networkd")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.ocspd"))
`

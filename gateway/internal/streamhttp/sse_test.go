package streamhttp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An event is framed with its name and id when it has them, and its id
// parses back to its stream and index; nothing else parses.
func TestFrameAndEventID(t *testing.T) {
	id := EventID("AB12", 7)
	if got := string(Frame("message", id, []byte(`{"a":1}`))); got != "event: message\nid: AB12_7\ndata: {\"a\":1}\n\n" {
		t.Errorf("Frame: %q", got)
	}
	if got := string(Frame("", "", nil)); got != "data: \n\n" {
		t.Errorf("Frame of nothing: %q", got)
	}
	if stream, index, ok := ParseEventID(id); !ok || stream != "AB12" || index != 7 {
		t.Errorf("ParseEventID(%q) = %q, %d, %v", id, stream, index, ok)
	}
	if stream, index, ok := ParseEventID(EventID("", 0)); !ok || stream != "" || index != 0 {
		t.Errorf("the standalone stream's first event: %q, %d, %v", stream, index, ok)
	}
	for _, bad := range []string{"", "AB12", "AB12_", "AB12_x", "AB12_-1", "A_B_1", "AB12_1_"} {
		if _, _, ok := ParseEventID(bad); ok {
			t.Errorf("ParseEventID(%q) is ok", bad)
		}
	}
}

// A write blocked on a client that does not read fails once the session
// closes; after that no write begins.
func TestCutterCutsAWriteInProgress(t *testing.T) {
	done := make(chan struct{})
	writing := make(chan struct{})
	result := make(chan error, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		cut := CutOnClose(done, rc)
		defer cut.Stop()
		chunk := []byte(strings.Repeat("x", 64<<10))
		result <- cut.Do(func() error {
			for first := true; ; first = false {
				if _, err := w.Write(chunk); err != nil {
					return err
				}
				if err := rc.Flush(); err != nil {
					return err
				}
				if first {
					close(writing)
				}
			}
		})
		result <- cut.Do(func() error { t.Error("a write began after the session closed"); return nil })
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL) // its body is never read
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-writing
	close(done)
	if err := <-result; err == nil || errors.Is(err, ErrClosed) {
		t.Errorf("the write in progress: %v, want its failure", err)
	}
	if err := <-result; !errors.Is(err, ErrClosed) {
		t.Errorf("a write after the close: %v, want ErrClosed", err)
	}
}

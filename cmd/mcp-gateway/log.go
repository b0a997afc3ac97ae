package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/lmittmann/tint"
)

// logSetup is the process's logger and the debug file it may own.
type logSetup struct {
	logger *slog.Logger
	file   *os.File // the debug file, closed by close
	sink   *logSink // stderr, without blocking the logger
}

// newLogger builds the stderr logger (tint; colour only when stderr is a
// terminal and NO_COLOR is unset) and, with debug on and a debug file
// given, a second uncoloured handler writing the same records to the file.
// The debug decision was made once, by config.Load.
func newLogger(stderr io.Writer, lookup func(string) (string, bool), debug bool, debugFile string) (*logSetup, error) {
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	_, noColor := lookup("NO_COLOR")
	sink := newLogSink(stderr, logSinkMax)
	handler := slog.Handler(tint.NewTextHandler(sink, &tint.Options{
		Level:      level,
		TimeFormat: time.TimeOnly,
		NoColor:    noColor || !isTerminal(stderr),
	}))
	ls := &logSetup{sink: sink}
	if debug && debugFile != "" {
		// The debug file may hold backends' output: it is the user's alone
		// (an existing file's wider mode is narrowed), and a symbolic link
		// is refused rather than followed to a file someone else chose.
		if fi, err := os.Lstat(debugFile); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			sink.Close(0)
			return nil, fmt.Errorf("open debug file: %s is a symbolic link", debugFile)
		}
		f, err := os.OpenFile(debugFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err == nil {
			err = f.Chmod(0o600)
		}
		if err != nil {
			sink.Close(0)
			return nil, fmt.Errorf("open debug file: %w", err)
		}
		ls.file = f
		handler = slog.NewMultiHandler(handler, tint.NewTextHandler(f, &tint.Options{
			Level:      slog.LevelDebug,
			TimeFormat: time.RFC3339Nano,
			NoColor:    true,
		}))
	}
	ls.logger = slog.New(maskHandler{handler})
	return ls, nil
}

func (ls *logSetup) close() {
	ls.sink.Close(time.Second)
	if ls.file != nil {
		ls.file.Close()
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

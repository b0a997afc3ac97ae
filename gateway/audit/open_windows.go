package audit

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// openAppend opens path for appending, creating it if need be. Unlike
// os.OpenFile it shares the file for deletion, so that another gateway's
// rotation can rename it while this one has it open (Windows refuses to
// rename a file opened without FILE_SHARE_DELETE). A symbolic link (or a
// junction) is opened itself, not followed (FILE_FLAG_OPEN_REPARSE_POINT),
// and refused.
func openAppend(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p,
		windows.FILE_APPEND_DATA|windows.FILE_READ_ATTRIBUTES|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_ALWAYS, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	// FILE_ATTRIBUTE_TAG_INFO: other reparse points (a cloud file's
	// placeholder, a deduplicated file) are files like any other.
	var info struct {
		Attributes uint32
		ReparseTag uint32
	}
	err = windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err != nil {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if info.Attributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 &&
		(info.ReparseTag == windows.IO_REPARSE_TAG_SYMLINK || info.ReparseTag == windows.IO_REPARSE_TAG_MOUNT_POINT) {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: errSymlink}
	}
	return os.NewFile(uintptr(h), path), nil
}

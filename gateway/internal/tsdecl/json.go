package tsdecl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// object is a JSON object that keeps its members' order: a tool's
// properties are declared in the order its schema gives them, which is
// the order its author meant them read in.
type object struct {
	keys []string // in order, each once (a repeated member keeps its first place and last value)
	vals map[string]any
}

func (o *object) get(k string) any {
	if o == nil {
		return nil
	}
	return o.vals[k]
}

func (o *object) has(k string) bool {
	if o == nil {
		return false
	}
	_, ok := o.vals[k]
	return ok
}

// keysOrNil is o's keys; none for a nil object.
func (o *object) keysOrNil() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// maxNesting bounds the nesting decode builds: deeper values are skipped
// (null), so that a hostile schema's depth costs no stack. Types nest
// maxDepth deep at most, through a few levels of JSON each.
const maxNesting = 8 * maxDepth

// decode parses one JSON value: objects as *object, numbers as
// json.Number, the rest as encoding/json does.
func decode(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	v, err := value(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the value")
	}
	return v, nil
}

func value(d *json.Decoder, depth int) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if depth >= maxNesting {
		return nil, skip(d)
	}
	switch delim {
	case '{':
		o := &object{vals: make(map[string]any)}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			key, _ := k.(string)
			v, err := value(d, depth+1)
			if err != nil {
				return nil, err
			}
			if _, seen := o.vals[key]; !seen {
				o.keys = append(o.keys, key)
			}
			o.vals[key] = v
		}
		_, err := d.Token() // }
		return o, err
	default: // [
		arr := []any{}
		for d.More() {
			v, err := value(d, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := d.Token() // ]
		return arr, err
	}
}

// skip reads the rest of the array or object just opened, without
// building it or recursing.
func skip(d *json.Decoder) error {
	for open := 1; open > 0; {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		if delim, ok := tok.(json.Delim); ok {
			if delim == '{' || delim == '[' {
				open++
			} else {
				open--
			}
		}
	}
	return nil
}

package config

import (
	"fmt"
	"reflect"
)

// profileSources describes each answer profile's effective fields and where
// each came from (Sources.Profiles). A field a profile leaves empty is
// inherited from the answer profile (Config.Profile), so MODEL_ANSWER
// moves all three tools unless their own model is set.
func (l *loader) profileSources() map[string]map[string]string {
	fields := l.keysOf(reflect.TypeFor[Profile]())
	out := make(map[string]map[string]string, len(profileNames))
	for _, name := range profileNames {
		own := reflect.ValueOf(l.cfg.ModelProfiles[name])
		eff := reflect.ValueOf(l.cfg.Profile(name))
		m := make(map[string]string, len(fields.names))
		for _, key := range fields.names {
			idx := fields.byName[key].index
			v := eff.FieldByIndex(idx).String()
			if v == "" {
				continue
			}
			from := l.from(join(join("model_profiles", name), key))
			if own.FieldByIndex(idx).String() == "" && name != ProfileAnswer {
				from = "from answer: " + l.from(join(join("model_profiles", ProfileAnswer), key))
			}
			m[key] = fmt.Sprintf("%s (%s)", v, from)
		}
		out[name] = m
	}
	return out
}

// from says where a key's value came from: "default", "env NAME", "flag
// --x" or "FILE:LINE".
func (l *loader) from(key string) string {
	o, ok := l.origin[key]
	switch {
	case !ok:
		return "default"
	case o.env != "":
		return "env " + o.env
	case o.flag != "":
		return "flag " + o.flag
	case o.line > 0:
		return fmt.Sprintf("%s:%d", l.file, o.line)
	}
	return "default"
}

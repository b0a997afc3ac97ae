package importer

// stripJSONC returns data with // and /* */ comments and trailing commas
// (which VS Code's JSON with comments allows) replaced by spaces, outside
// strings. Newlines are kept, so offsets and lines stay those of data.
func stripJSONC(data []byte) []byte {
	out := make([]byte, len(data))
	copy(out, data)
	inString, lastComma := false, -1
	prev := byte(0) // the last significant byte outside comments
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString, prev = false, '"'
			}
		case c == '"':
			inString, lastComma = true, -1
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			out[i], out[i+1] = ' ', ' '
			for i += 2; i < len(out); i++ {
				if out[i] == '*' && i+1 < len(out) && out[i+1] == '/' {
					out[i], out[i+1] = ' ', ' '
					i++
					break
				}
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
		case c == ',':
			// Only a comma after a value can be trailing: "{,}" stays invalid.
			lastComma = -1
			if prev != '{' && prev != '[' && prev != ',' && prev != ':' && prev != 0 {
				lastComma = i
			}
			prev = c
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma, prev = -1, c
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			lastComma, prev = -1, c
		}
	}
	return out
}

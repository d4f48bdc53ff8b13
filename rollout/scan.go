package rollout

import "bytes"

// Members walks the members of the JSON object in raw, which must already be
// known to be valid JSON. For each member it calls fn with the key's raw
// bytes (between the quotes, escapes left as they are) and the byte range
// [start, end) of the value; returning false stops the walk. It copies
// nothing and unescapes nothing: values that are megabytes of base64 or tool
// output are skipped at memchr speed, which is what keeps routing cheap.
func Members(raw []byte, fn func(key []byte, start, end int) bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return
		}
		kEnd := stringEnd(raw, i)
		if kEnd < 0 {
			return
		}
		key := raw[i+1 : kEnd-1]
		i = skipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return
		}
		i = skipSpace(raw, i+1)
		end := ValueEnd(raw, i)
		if end < 0 {
			return
		}
		if !fn(key, i, end) {
			return
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ',' {
			return
		}
		i++
	}
}

// Elements walks the elements of the JSON array in raw (valid JSON).
func Elements(raw []byte, fn func(start, end int) bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return
	}
	for {
		i = skipSpace(raw, i)
		end := ValueEnd(raw, i)
		if end < 0 || !fn(i, end) {
			return
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ',' {
			return
		}
		i++
	}
}

// ValueEnd returns the index just past the JSON value starting at raw[i], or
// -1 if it does not end.
func ValueEnd(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		return stringEnd(raw, i)
	case '{', '[':
		depth := 0
		for i < len(raw) {
			switch raw[i] {
			case '"':
				e := stringEnd(raw, i)
				if e < 0 {
					return -1
				}
				i = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default:
		for i < len(raw) {
			switch raw[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return i
			}
			i++
		}
		return i
	}
}

// stringEnd returns the index just past the string starting at raw[i] == '"'.
func stringEnd(raw []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(raw[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		// The quote is escaped when an odd number of backslashes precede it.
		bs := 0
		for p := q - 1; p > i && raw[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// StringValue returns the contents of a JSON string value without its
// quotes when it has no escapes (the common case for ids and types), and
// ok=false otherwise so callers can fall back to a full decoder.
func StringValue(v []byte) (s []byte, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	s = v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, false
	}
	return s, true
}

// AppendJSONString appends s as a JSON string literal, escaping the way
// serde_json (Codex's writer) does: only '"', '\\' and control characters;
// '<', '>', '&' and non-ASCII UTF-8 stay raw, so the text stays readable
// and new lines look like the agent's own. s must be UTF-8.
func AppendJSONString[T string | []byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

package rollout

// A torn line with records glued after it: a writer died in the middle of
// a record, and the next append (Codex before 0.145 resuming the thread)
// wrote complete records right after the torn bytes, on the same line:
// `{"timestamp":"2026-…","type":"resp` then `{"timestamp":…}` then the
// newline. Codex reads lines whole, so it skips the line and the intact
// records with it; splitting at the record boundary keeps them.

// maxGlued bounds the records taken from the end of one torn line.
const maxGlued = 64

// gluedParts finds the complete records at the end of raw, a line that is
// neither one object nor several: the [start,end) ranges of each, in
// order, with bytes before the first that are not a record (the torn
// part). nil when the line does not end with one. A record is an object
// with a top-level "timestamp" string and "type": the envelope every Codex
// writer starts with; an inner object the torn bytes happen to end with
// (a payload) has no timestamp. The work is linear in the line: each
// record is found by one backward scan and validated once.
func gluedParts(raw []byte) [][2]int {
	var parts [][2]int
	end := len(raw)
	for len(parts) < maxGlued {
		e := end
		for e > 0 && isSpace(raw[e-1]) {
			e--
		}
		start := objectStart(raw, e)
		if start < 0 || !isRecord(raw[start:e]) {
			break
		}
		parts = append(parts, [2]int{start, e})
		end = start
	}
	if len(parts) == 0 {
		return nil
	}
	torn := raw[:parts[len(parts)-1][0]]
	if isBlank(torn) {
		return nil // objects only: a concatenated line, or not a line of records
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return parts
}

// objectStart is where the object ending at raw[e-1] == '}' starts, found
// by walking back over strings and nesting; -1 when raw[:e] does not end
// with one the walk can delimit. Within a valid object every quote inside
// a string is escaped (an odd run of backslashes before it), so a string
// is delimited backwards as surely as forwards.
func objectStart(raw []byte, e int) int {
	if e == 0 || raw[e-1] != '}' {
		return -1
	}
	depth := 0
	for i := e - 1; i >= 0; i-- {
		switch raw[i] {
		case '"':
			for i--; i >= 0; i-- {
				if raw[i] == '"' && !escaped(raw, i) {
					break
				}
			}
			if i < 0 {
				return -1
			}
		case '}', ']':
			depth++
			if depth > maxDepth {
				return -1
			}
		case '{', '[':
			depth--
			if depth == 0 {
				if raw[i] != '{' {
					return -1
				}
				return i
			}
			if depth < 0 {
				return -1
			}
		}
	}
	return -1
}

// escaped reports whether the quote at raw[i] follows an odd number of
// backslashes.
func escaped(raw []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && raw[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// isRecord reports whether b is one valid JSON object with a "timestamp"
// string and a "type" member at its top level.
func isRecord(b []byte) bool {
	if !validObject(b) {
		return false
	}
	var ts, typ bool
	Members(b, func(key []byte, s, e int) bool {
		switch string(key) {
		case "timestamp":
			ts = b[s] == '"'
		case "type":
			typ = true
		}
		return !(ts && typ)
	})
	return ts && typ
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}
